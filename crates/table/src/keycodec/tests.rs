//! Golden bytes (docs/format/table-keys.md, version 1) and order properties of the key codec.

use super::*;
use proptest::prelude::*;
use std::cmp::Ordering;

fn col(ty: ColumnType, nullable: bool, desc: bool) -> KeyCol {
    KeyCol { ty, nullable, desc }
}

fn enc(v: &Value, c: KeyCol) -> Vec<u8> {
    let mut out = Vec::new();
    encode_value(&mut out, v, &c);
    out
}

#[test]
fn golden_bytes_v1() {
    let nn = |ty| col(ty, false, false);
    assert_eq!(enc(&Value::I64(1), nn(ColumnType::I64)), [0x80, 0, 0, 0, 0, 0, 0, 1]);
    assert_eq!(
        enc(&Value::I64(-1), nn(ColumnType::I64)),
        [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
    );
    assert_eq!(enc(&Value::DateTime(0), nn(ColumnType::DateTime)), [0x80, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(enc(&Value::I32(-2), nn(ColumnType::I32)), [0x7F, 0xFF, 0xFF, 0xFE]);
    assert_eq!(enc(&Value::U64(258), nn(ColumnType::U64)), [0, 0, 0, 0, 0, 0, 1, 2]);
    assert_eq!(enc(&Value::F64(1.0), nn(ColumnType::F64)), [0xBF, 0xF0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        enc(&Value::F64(-1.0), nn(ColumnType::F64)),
        [0x40, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
    );
    assert_eq!(enc(&Value::Varchar("ab".into()), nn(ColumnType::Varchar)), [b'a', b'b', 0, 1]);
    assert_eq!(enc(&Value::Bytes(vec![1, 0, 2]), nn(ColumnType::Bytes)), [1, 0, 0xFF, 2, 0, 1]);
    assert_eq!(enc(&Value::Null, col(ColumnType::I32, true, false)), [0x00]);
    assert_eq!(enc(&Value::I32(0), col(ColumnType::I32, true, false)), [0x01, 0x80, 0, 0, 0]);
    assert_eq!(
        enc(&Value::I32(0), col(ColumnType::I32, true, true)),
        [0xFE, 0x7F, 0xFF, 0xFF, 0xFF]
    );
    assert_eq!(enc(&Value::Null, col(ColumnType::Varchar, true, true)), [0xFF]);
    let mut k = Vec::new();
    put_index_id(&mut k, 258);
    assert_eq!(k, [0, 0, 1, 2]);
    assert_eq!(index_id_of(&k).unwrap(), 258);
}

#[test]
fn prefix_successor_cases() {
    assert_eq!(prefix_successor(&[1, 2]), Some(vec![1, 3]));
    assert_eq!(prefix_successor(&[1, 0xFF]), Some(vec![2]));
    assert_eq!(prefix_successor(&[0xFF, 0xFF]), None);
}

#[test]
fn malformed_input_is_corruption_not_panic() {
    let c = col(ColumnType::Varchar, true, false);
    for bad in [&[][..], &[0x02], &[0x01, b'a'], &[0x01, 0, 0x05], &[0x01, 0xC3, 0x28, 0, 1]] {
        let mut pos = 0;
        assert!(
            matches!(decode_value(bad, &mut pos, &c), Err(TableError::Corruption { .. })),
            "{bad:?}"
        );
    }
    let mut pos = 0;
    assert!(decode_value(&[0x80, 0], &mut pos, &col(ColumnType::I64, false, false)).is_err());
    assert!(index_id_of(&[0, 1]).is_err());
}

fn value_for(ty: ColumnType) -> BoxedStrategy<Value> {
    match ty {
        ColumnType::I64 => any::<i64>().prop_map(Value::I64).boxed(),
        ColumnType::DateTime => any::<i64>().prop_map(Value::DateTime).boxed(),
        ColumnType::I32 => any::<i32>().prop_map(Value::I32).boxed(),
        ColumnType::U64 => any::<u64>().prop_map(Value::U64).boxed(),
        ColumnType::F64 => any::<f64>().prop_map(Value::F64).boxed(),
        ColumnType::Bytes => proptest::collection::vec(
            prop_oneof![Just(0u8), Just(1u8), Just(0xFFu8), any::<u8>()],
            0..6,
        )
        .prop_map(Value::Bytes)
        .boxed(),
        ColumnType::Varchar => "[a\\x00b]{0,5}".prop_map(Value::Varchar).boxed(),
    }
}

fn cmp(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        (Value::I64(x), Value::I64(y)) | (Value::DateTime(x), Value::DateTime(y)) => x.cmp(y),
        (Value::I32(x), Value::I32(y)) => x.cmp(y),
        (Value::U64(x), Value::U64(y)) => x.cmp(y),
        (Value::F64(x), Value::F64(y)) => x.total_cmp(y),
        (Value::Bytes(x), Value::Bytes(y)) => x.cmp(y),
        (Value::Varchar(x), Value::Varchar(y)) => x.as_bytes().cmp(y.as_bytes()),
        _ => unreachable!("mixed types"),
    }
}

const TYPES: [ColumnType; 7] = [
    ColumnType::I64,
    ColumnType::U64,
    ColumnType::I32,
    ColumnType::F64,
    ColumnType::Bytes,
    ColumnType::Varchar,
    ColumnType::DateTime,
];

fn two_cols() -> impl Strategy<Value = (KeyCol, KeyCol, Vec<(Value, Value)>)> {
    (0..7usize, 0..7usize, any::<(bool, bool, bool, bool)>()).prop_flat_map(
        |(a, b, (na, nb, da, db))| {
            let ca = col(TYPES[a], na, da);
            let cb = col(TYPES[b], nb, db);
            let va = if na {
                prop_oneof![1 => Just(Value::Null), 4 => value_for(ca.ty)].boxed()
            } else {
                value_for(ca.ty)
            };
            let vb = if nb {
                prop_oneof![1 => Just(Value::Null), 4 => value_for(cb.ty)].boxed()
            } else {
                value_for(cb.ty)
            };
            (Just(ca), Just(cb), proptest::collection::vec((va, vb), 2..8))
        },
    )
}

fn dir(o: Ordering, desc: bool) -> Ordering {
    if desc {
        o.reverse()
    } else {
        o
    }
}

proptest! {
    /// Byte order of two-column keys equals the column-wise value order, and decoding returns
    /// the values.
    #[test]
    fn byte_order_is_value_order((ca, cb, rows) in two_cols()) {
        let cols = [ca, cb];
        let keys: Vec<Vec<u8>> = rows.iter().map(|(a, b)| {
            let mut k = Vec::new();
            encode_values(&mut k, [a, b], &cols);
            k
        }).collect();
        for (i, (a, b)) in rows.iter().enumerate() {
            let mut pos = 0;
            let back = decode_values(&keys[i], &mut pos, &cols).unwrap();
            prop_assert_eq!(pos, keys[i].len());
            prop_assert!(cmp(&back[0], a).is_eq() && cmp(&back[1], b).is_eq());
            for (j, (c, d)) in rows.iter().enumerate() {
                let want = dir(cmp(a, c), ca.desc).then(dir(cmp(b, d), cb.desc));
                prop_assert_eq!(keys[i].cmp(&keys[j]), want, "{:?} vs {:?}", rows[i], rows[j]);
            }
        }
    }

    /// Garbage never panics the decoder.
    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..20), t in 0..7usize, n: bool, d: bool) {
        let c = col(TYPES[t], n, d);
        let mut pos = 0;
        let _ = decode_value(&bytes, &mut pos, &c);
        prop_assert!(pos <= bytes.len());
    }
}
