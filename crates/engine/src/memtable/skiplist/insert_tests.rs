//! A lone `insert` and a concurrent insert interleaved step by step (the concurrent one split at
//! its allocation, [`SkipList::begin_concurrent`], and its links, `finish_concurrent`), with the
//! heights chosen: an `insert` made while another writer is between the two must not link with
//! plain stores, nor leave a splice that the other's links make stale. Deterministic, unlike
//! the threaded tests (`memtable/concurrent_tests.rs`), which rarely hit the window on a
//! loaded machine; loom checks every interleaving of a smaller case (`loom_tests.rs`).

use super::super::{key_prefix, SkipList};
use super::random_height;
use crate::key::{self, compare_internal, ValueKind};

/// Sets the writer's generator so that the next height drawn is `h`.
fn next_height(list: &SkipList, h: usize) {
    let seed = (1u64..)
        .find(|&s| {
            let mut r = s;
            random_height(&mut r) == h
        })
        .expect("some seed gives every height");
    list.writer.lock().rng = seed;
}

fn put(list: &SkipList, user: &[u8], seq: u64, height: usize) {
    next_height(list, height);
    let ikey = key::make_internal_key(user, seq, ValueKind::Put);
    list.insert(
        key_prefix(user),
        ikey.len(),
        |dst| dst.copy_from_slice(&ikey),
        |n| compare_internal(n, &ikey),
        user,
    );
}

fn user_keys(list: &SkipList, level: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut x = list.next(list.head.as_ptr(), level);
    while !x.is_null() {
        out.push(key::user_key(list.key_at(x)).to_vec());
        x = list.next(x, level);
    }
    out
}

/// A concurrent insert of `b` (height 2) allocated before a lone insert of `c` (height 1) and
/// linked after it; then a lone insert of `d` (height 2). Linking `c` with plain stores, or
/// keeping its splice (`[c, head, ..]`), puts `d` before `b` on level 1.
#[test]
fn lone_insert_while_a_concurrent_insert_is_in_flight() {
    let list = SkipList::new();
    let bkey = key::make_internal_key(b"b", 1, ValueKind::Put);
    let (base, height) = list.begin_concurrent(Some(2), bkey.len(), 1);
    put(&list, b"c", 2, 1);
    // SAFETY: allocated above for this height and sizes, not yet published.
    let node = unsafe {
        SkipList::fill_node(base, height, bkey.len(), |d| d.copy_from_slice(&bkey), b"b")
    };
    list.finish_concurrent(node, height, key_prefix(b"b"), &|n: &[u8]| compare_internal(n, &bkey));
    put(&list, b"d", 3, 2);
    assert_eq!(list.check_levels(compare_internal), 3);
    assert_eq!(user_keys(&list, 0), [b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]);
    assert_eq!(user_keys(&list, 1), [b"b".to_vec(), b"d".to_vec()]);
    for (k, seq) in [(&b"b"[..], 1), (b"c", 2), (b"d", 3)] {
        let target = key::seek_key(k, 10);
        let n = list.seek_ge(Some(key_prefix(k)), |x| compare_internal(x, &target));
        let n = n.expect("every key found");
        assert_eq!(
            (list.key(n), list.value(n)),
            (&key::make_internal_key(k, seq, ValueKind::Put)[..], k)
        );
    }
}

/// With no concurrent insert in flight, a lone insert reuses its splice: ascending keys of
/// every height stay sorted on every level (the plain-store path).
#[test]
fn lone_inserts_alone_keep_every_level_sorted() {
    let list = SkipList::new();
    for i in 0..200u64 {
        let k = format!("k{i:04}");
        put(&list, k.as_bytes(), i + 1, 1 + (i as usize * 7) % 4);
    }
    assert_eq!(list.check_levels(compare_internal), 200);
    assert!(!user_keys(&list, 3).is_empty());
}
