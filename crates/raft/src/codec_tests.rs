//! Golden bytes of every record (the examples of docs/format/raft.md, which
//! `tests/format_doc.rs` checks against the document), round trips, and refusal of damage.

use std::collections::{BTreeMap, BTreeSet};

use super::*;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn log_id(term: u64, node: u64, index: u64) -> LogId {
    LogId::new(openraft::CommittedLeaderId::new(term, node), index)
}

fn membership() -> Membership {
    let mut nodes = BTreeMap::new();
    nodes.insert(1, Node { addr: "a:1".into() });
    nodes.insert(2, Node { addr: "b:2".into() });
    nodes.insert(3, Node { addr: "c:3".into() });
    Membership::new(vec![BTreeSet::from([1, 2])], nodes)
}

/// The examples, as (name, bytes); the document lists the same names with the same hex.
pub(crate) fn examples() -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    let mut v = Vec::new();
    encode_entry(
        &Entry { log_id: log_id(2, 1, 7), payload: openraft::EntryPayload::Blank },
        &mut v,
    );
    out.push(("entry-blank", v));
    let mut v = Vec::new();
    let put = Request::Put { key: "k".into(), value: "v1".into() };
    encode_entry(
        &Entry { log_id: log_id(2, 1, 8), payload: openraft::EntryPayload::Normal(put) },
        &mut v,
    );
    out.push(("entry-put", v));
    let mut v = Vec::new();
    let del = Request::Delete { key: "k".into() };
    encode_entry(
        &Entry { log_id: log_id(2, 1, 9), payload: openraft::EntryPayload::Normal(del) },
        &mut v,
    );
    out.push(("entry-delete", v));
    let mut v = Vec::new();
    let m = openraft::EntryPayload::Membership(membership());
    encode_entry(&Entry { log_id: log_id(1, 1, 1), payload: m }, &mut v);
    out.push(("entry-membership", v));
    out.push(("vote", encode_vote(&Vote::new(3, 2))));
    out.push(("vote-committed", encode_vote(&Vote::new_committed(3, 2))));
    out.push(("log-id-none", encode_opt_log_id(None)));
    out.push(("log-id", encode_opt_log_id(Some(&log_id(2, 1, 8)))));
    let sm = StoredMembership::new(Some(log_id(1, 1, 1)), membership());
    out.push(("stored-membership", encode_stored_membership(&sm)));
    let meta = SnapshotMeta {
        last_log_id: Some(log_id(2, 1, 9)),
        last_membership: sm,
        snapshot_id: "s".into(),
    };
    out.push(("snapshot-meta", encode_snapshot_meta(&meta)));
    out.push(("node-id", encode_node_id(3)));
    out
}

#[test]
fn records_match_the_golden_bytes() {
    let want = [
        ("entry-blank", "01 0200000000000000 0100000000000000 0700000000000000 00"),
        (
            "entry-put",
            "01 0200000000000000 0100000000000000 0800000000000000 01 01 01000000 6b 02000000 7631",
        ),
        ("entry-delete", "01 0200000000000000 0100000000000000 0900000000000000 01 02 01000000 6b"),
        (
            "entry-membership",
            "01 0100000000000000 0100000000000000 0100000000000000 02 \
             01000000 02000000 0100000000000000 0200000000000000 \
             03000000 0100000000000000 03000000 613a31 0200000000000000 03000000 623a32 \
             0300000000000000 03000000 633a33",
        ),
        ("vote", "01 0300000000000000 0200000000000000 00"),
        ("vote-committed", "01 0300000000000000 0200000000000000 01"),
        ("log-id-none", "01 00"),
        ("log-id", "01 01 0200000000000000 0100000000000000 0800000000000000"),
        (
            "stored-membership",
            "01 01 0100000000000000 0100000000000000 0100000000000000 \
             01000000 02000000 0100000000000000 0200000000000000 \
             03000000 0100000000000000 03000000 613a31 0200000000000000 03000000 623a32 \
             0300000000000000 03000000 633a33",
        ),
        (
            "snapshot-meta",
            "01 01 0200000000000000 0100000000000000 0900000000000000 \
             01 0100000000000000 0100000000000000 0100000000000000 \
             01000000 02000000 0100000000000000 0200000000000000 \
             03000000 0100000000000000 03000000 613a31 0200000000000000 03000000 623a32 \
             0300000000000000 03000000 633a33 01000000 73",
        ),
        ("node-id", "01 0300000000000000"),
    ];
    let got = examples();
    assert_eq!(got.len(), want.len());
    for ((name, bytes), (wname, whex)) in got.iter().zip(want) {
        assert_eq!(*name, wname);
        assert_eq!(hex(bytes), whex.split_whitespace().collect::<String>(), "{name}");
    }
}

#[test]
fn records_round_trip() {
    let ex = examples();
    let get = |n: &str| ex.iter().find(|(name, _)| *name == n).map(|(_, b)| b.clone()).unwrap();
    for n in ["entry-blank", "entry-put", "entry-delete", "entry-membership"] {
        let e = decode_entry(&get(n)).unwrap();
        let mut again = Vec::new();
        encode_entry(&e, &mut again);
        assert_eq!(again, get(n), "{n}");
        assert_eq!(entry_log_id(&get(n)).unwrap(), e.log_id);
    }
    let e = decode_entry(&get("entry-membership")).unwrap();
    match e.payload {
        openraft::EntryPayload::Membership(m) => assert_eq!(m, membership()),
        p => panic!("{p:?}"),
    }
    assert_eq!(decode_vote(&get("vote-committed")).unwrap(), Vote::new_committed(3, 2));
    assert_eq!(decode_opt_log_id(&get("log-id"), "x").unwrap(), Some(log_id(2, 1, 8)));
    assert_eq!(decode_opt_log_id(&get("log-id-none"), "x").unwrap(), None);
    let sm = decode_stored_membership(&get("stored-membership")).unwrap();
    assert_eq!(sm, StoredMembership::new(Some(log_id(1, 1, 1)), membership()));
    let meta = decode_snapshot_meta(&get("snapshot-meta")).unwrap();
    assert_eq!(meta.snapshot_id, "s");
    assert_eq!(decode_node_id(&get("node-id")).unwrap(), 3);
    let empty = StoredMembership::default();
    assert_eq!(decode_stored_membership(&encode_stored_membership(&empty)).unwrap(), empty);
}

/// Every truncation, every extension and a flip of each byte of each example is refused with
/// `Corruption` or decodes to a different value (a flipped integer is still an integer), and
/// nothing panics.
#[test]
fn damage_is_refused_or_visible_never_a_panic() {
    type Decode = fn(&[u8]) -> Result<String, Error>;
    let decoders: [(&str, Decode); 11] = [
        ("entry-blank", |b| decode_entry(b).map(|e| format!("{e:?}"))),
        ("entry-put", |b| decode_entry(b).map(|e| format!("{e:?}"))),
        ("entry-delete", |b| decode_entry(b).map(|e| format!("{e:?}"))),
        ("entry-membership", |b| decode_entry(b).map(|e| format!("{e:?}"))),
        ("vote", |b| decode_vote(b).map(|v| format!("{v:?}"))),
        ("vote-committed", |b| decode_vote(b).map(|v| format!("{v:?}"))),
        ("log-id-none", |b| decode_opt_log_id(b, "x").map(|v| format!("{v:?}"))),
        ("log-id", |b| decode_opt_log_id(b, "x").map(|v| format!("{v:?}"))),
        ("stored-membership", |b| decode_stored_membership(b).map(|v| format!("{v:?}"))),
        ("snapshot-meta", |b| decode_snapshot_meta(b).map(|v| format!("{v:?}"))),
        ("node-id", |b| decode_node_id(b).map(|v| format!("{v:?}"))),
    ];
    for ((name, bytes), (dname, decode)) in examples().into_iter().zip(decoders) {
        assert_eq!(name, dname);
        let good = decode(&bytes).unwrap();
        for n in 0..bytes.len() {
            let e = decode(&bytes[..n]).expect_err(&format!("{name} cut to {n}"));
            assert!(e.is_corruption(), "{name} cut to {n}: {e}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).unwrap_err().is_corruption(), "{name} + 1 byte");
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x81;
            if let Ok(v) = decode(&bad) {
                assert_ne!(v, good, "{name}: byte {i} flipped decodes to the same value");
            }
        }
    }
}

#[test]
fn a_huge_count_is_refused_without_allocating() {
    let mut b = vec![VERSION, 0];
    b.extend_from_slice(&u32::MAX.to_le_bytes());
    let e = decode_stored_membership(&b).unwrap_err();
    assert!(e.to_string().contains("a count of 4294967295"), "{e}");
}

/// docs/format/raft.md's golden block lists exactly the encoders' bytes, line for line.
#[test]
fn the_format_document_shows_these_bytes() {
    let doc = include_str!("../../../docs/format/raft.md");
    let block =
        doc.split("```golden\n").nth(1).and_then(|b| b.split("```").next()).expect("golden block");
    let lines: Vec<(&str, String)> = block
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut parts = l.split_whitespace();
            (parts.next().unwrap_or(""), parts.collect::<String>())
        })
        .collect();
    let ex = examples();
    assert_eq!(lines.len(), ex.len(), "the document lists {} examples", lines.len());
    for ((name, doc_hex), (ex_name, bytes)) in lines.iter().zip(&ex) {
        assert_eq!(name, ex_name);
        assert_eq!(*doc_hex, hex(bytes), "{name}");
    }
}
