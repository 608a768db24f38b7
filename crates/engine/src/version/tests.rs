//! Tests for [`Version`]'s lookups against linear-scan models.

use rand::{Rng, SeedableRng};

use super::*;
use crate::key::ValueKind;

fn meta(number: u64, smallest: &[u8], largest: &[u8], largest_seq: u64) -> Arc<FileMetaData> {
    Arc::new(FileMetaData {
        number,
        file_size: 100,
        smallest: InternalKey::new(smallest, largest_seq, ValueKind::Put),
        largest: InternalKey::new(largest, 1, ValueKind::Put),
        smallest_seq: 1,
        largest_seq,
        num_entries: 1,
        num_deletions: 0,
        oldest_blob_file_number: 0,
        reader: Default::default(),
    })
}

fn key(k: u16) -> Vec<u8> {
    k.to_be_bytes().to_vec()
}

/// A random version: overlapping L0 files newest first, disjoint sorted files below.
fn random_version(rng: &mut impl Rng) -> Version {
    let mut v = Version::new(4);
    let mut number = 1;
    for i in 0..rng.gen_range(0..6) {
        let a: u16 = rng.gen_range(0..1000);
        let b = a + rng.gen_range(0..200);
        v.files[0].push(meta(number, &key(a), &key(b), 1000 - i));
        number += 1;
    }
    for level in 1..4 {
        let mut bounds: Vec<u16> =
            (0..rng.gen_range(0..12)).map(|_| rng.gen_range(0..1200)).collect();
        bounds.sort_unstable();
        bounds.dedup();
        for pair in bounds.chunks_exact(2) {
            // Sometimes a single-key file.
            let hi = if rng.gen_range(0..4) == 0 { pair[0] } else { pair[1] };
            v.files[level].push(meta(number, &key(pair[0]), &key(hi), 10));
            number += 1;
        }
    }
    v
}

fn numbers(files: &[Arc<FileMetaData>]) -> Vec<u64> {
    let mut n: Vec<u64> = files.iter().map(|f| f.number).collect();
    n.sort_unstable();
    n
}

fn overlaps(f: &FileMetaData, lo: &[u8], hi: &[u8]) -> bool {
    !(f.largest.user_key() < lo || f.smallest.user_key() > hi)
}

/// Model: repeat "take every overlapping file and widen" until nothing changes.
fn model_overlapping(v: &Version, level: usize, lo: &[u8], hi: &[u8]) -> Vec<u64> {
    let (mut lo, mut hi) = (lo.to_vec(), hi.to_vec());
    loop {
        let hit: Vec<&Arc<FileMetaData>> =
            v.level_files(level).iter().filter(|f| overlaps(f, &lo, &hi)).collect();
        if level > 0 {
            return numbers(&hit.into_iter().cloned().collect::<Vec<_>>());
        }
        let mut nlo = lo.clone();
        let mut nhi = hi.clone();
        for f in &hit {
            nlo = nlo.min(f.smallest.user_key().to_vec());
            nhi = nhi.max(f.largest.user_key().to_vec());
        }
        if (&nlo, &nhi) == (&lo, &hi) {
            return numbers(&hit.into_iter().cloned().collect::<Vec<_>>());
        }
        (lo, hi) = (nlo, nhi);
    }
}

#[test]
fn overlapping_files_matches_model() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    for _ in 0..300 {
        let v = random_version(&mut rng);
        for _ in 0..20 {
            let a: u16 = rng.gen_range(0..1300);
            let b = a + rng.gen_range(0..100);
            for level in 0..4 {
                let got = numbers(&v.overlapping_files(level, &key(a), &key(b)));
                assert_eq!(got, model_overlapping(&v, level, &key(a), &key(b)), "L{level}");
            }
        }
    }
}

#[test]
fn level0_overlap_widens_transitively() {
    let mut v = Version::new(2);
    v.files[0] = vec![
        meta(4, b"x", b"z", 40),
        meta(3, b"e", b"h", 30),
        meta(2, b"b", b"f", 20),
        meta(1, b"a", b"c", 10),
    ];
    // [a, a] touches file 1 only, which reaches c, which touches file 2, which reaches f...
    assert_eq!(numbers(&v.overlapping_files(0, b"a", b"a")), vec![1, 2, 3]);
    assert_eq!(numbers(&v.overlapping_files(0, b"i", b"w")), Vec::<u64>::new());
    assert_eq!(numbers(&v.overlapping_files(0, b"y", b"y")), vec![4]);
}

#[test]
fn for_each_file_for_key_matches_model_and_stops() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(2);
    for _ in 0..300 {
        let v = random_version(&mut rng);
        for _ in 0..20 {
            let k = key(rng.gen_range(0..1300));
            let mut want = Vec::new();
            for (level, files) in v.files.iter().enumerate() {
                for f in files {
                    if f.smallest.user_key() <= &k[..] && &k[..] <= f.largest.user_key() {
                        want.push((level, f.number));
                    }
                }
            }
            let mut got = Vec::new();
            v.for_each_file_for_key(&k, |level, f| {
                got.push((level, f.number));
                true
            });
            assert_eq!(got, want);
            if want.len() > 1 {
                let mut calls = 0;
                v.for_each_file_for_key(&k, |_, _| {
                    calls += 1;
                    false
                });
                assert_eq!(calls, 1, "returning false must stop the search");
            }
        }
    }
}
