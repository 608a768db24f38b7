//! Catalog record encoding: golden bytes (version 1), round trip, validation, bad bytes.

use super::*;

fn def() -> TableDef {
    TableDef {
        name: "t".into(),
        columns: vec![
            ColumnDef { name: "id".into(), ty: ColumnType::I64, nullable: false },
            ColumnDef { name: "p".into(), ty: ColumnType::I32, nullable: true },
        ],
        primary_key: vec!["id".into()],
        indexes: vec![IndexDef { name: "ix".into(), columns: vec!["p DESC".into()], unique: true }],
    }
}

#[test]
fn golden_bytes_v1() {
    let m = TableMeta::resolve(&def(), 256, &[(257, IndexState::Building)]).unwrap();
    let e = m.encode();
    let mut want = vec![1, 0, 0, 1, 0, 2];
    want.extend_from_slice(&[2, b'i', b'd', 1, 0]);
    want.extend_from_slice(&[1, b'p', 3, 1]);
    want.extend_from_slice(&[1, 2, b'i', b'd']);
    want.extend_from_slice(&[1, 2, b'i', b'x', 0, 0, 1, 1, 1, 1]);
    want.extend_from_slice(&[1, 6, b'p', b' ', b'D', b'E', b'S', b'C']);
    assert_eq!(e, want);
    let back = TableMeta::decode("t", &e).unwrap();
    assert_eq!(back.id, 256);
    assert_eq!(back.indexes[0].state, IndexState::Building);
    assert!(back.indexes[0].key_cols[0].desc);
    assert!(back.def.indexes.is_empty(), "a building index is not in the user's def");
    assert_eq!(back.encode(), e);
}

#[test]
fn every_truncation_and_flip_is_an_error_or_valid() {
    let m = TableMeta::resolve(&def(), 256, &[(257, IndexState::Ready)]).unwrap();
    let e = m.encode();
    for n in 0..e.len() {
        assert!(TableMeta::decode("t", &e[..n]).is_err(), "truncated at {n}");
    }
    for i in 0..e.len() {
        for x in [1u8, 0x80, 0xFF] {
            let mut b = e.clone();
            b[i] ^= x;
            let _ = TableMeta::decode("t", &b);
        }
    }
}

#[test]
fn resolve_refuses_bad_defs() {
    let mut d = def();
    d.indexes[0].columns = vec!["nope".into()];
    assert!(
        matches!(TableMeta::resolve(&d, 256, &[(257, IndexState::Ready)]), Err(TableError::Schema { column, .. }) if column == "nope")
    );
    let mut d = def();
    d.primary_key = vec!["p".into()];
    assert!(
        matches!(TableMeta::resolve(&d, 256, &[(257, IndexState::Ready)]), Err(TableError::Schema { column, .. }) if column == "p")
    );
    let mut d = def();
    d.indexes[0].name = PRIMARY.into();
    assert!(matches!(
        TableMeta::resolve(&d, 256, &[(257, IndexState::Ready)]),
        Err(TableError::IndexExists(_))
    ));
    let mut d = def();
    d.primary_key.clear();
    assert!(TableMeta::resolve(&d, 256, &[(257, IndexState::Ready)]).is_err());
}
