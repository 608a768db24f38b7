//! Helpers shared by the integration tests (`model/`, `recovery.rs`): tiny options that make
//! flushes and compactions happen after a few KiB, a `BTreeMap` oracle of the write operations,
//! and whole-database comparisons against it.
//!
//! Each test binary compiles this module on its own and uses part of it.
#![allow(dead_code)]

pub mod corrupt;
pub mod prefixes;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use rand::Rng;
use talus::fs::Fs;
use talus::{Db, Options, ReadOptions, Result, WriteBatch, WriteOptions};

/// The oracle: user key → value.
pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// The bytes keys are made of: a small alphabet so that operations collide.
pub const ALPHABET: &[u8] = b"abcd";

/// Where a database lives on a `SimFs`.
pub const SIM_DB: &str = "/db";

/// `MANIFEST-000005` of a database made by RocksDB 7.8.3's `ldb --create_if_missing put a b`
/// (Debian's rocksdb-tools): a comparator record, then edits with RocksDB's tag 9 (previous
/// log number), which Talus never writes.
pub const ROCKSDB_MANIFEST: [u8; 59] = [
    0x56, 0xf9, 0xb8, 0xf8, 0x1c, 0x00, 0x01, 0x01, 0x1a, 0x6c, 0x65, 0x76, 0x65, 0x6c, 0x64, 0x62,
    0x2e, 0x42, 0x79, 0x74, 0x65, 0x77, 0x69, 0x73, 0x65, 0x43, 0x6f, 0x6d, 0x70, 0x61, 0x72, 0x61,
    0x74, 0x6f, 0x72, 0xf4, 0x03, 0x0c, 0x5a, 0x04, 0x00, 0x01, 0x02, 0x00, 0x04, 0x00, 0xfc, 0x2c,
    0x26, 0xf9, 0x06, 0x00, 0x01, 0x09, 0x00, 0x03, 0x06, 0x04, 0x00,
];

/// A key or value that prints as `b(b"...")`, so that a failing case prints as Rust that can be
/// pasted into a regression test (where [`b`] builds it back).
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub Vec<u8>);

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "b(b\"{}\")", self.0.escape_ascii())
    }
}

impl std::ops::Deref for Bytes {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.0
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Bytes {
        Bytes(v)
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Builds a [`Bytes`] (or a `Vec<u8>`) from a literal: `b(b"key")`.
pub fn b<T: From<Vec<u8>>>(s: &[u8]) -> T {
    T::from(s.to_vec())
}

/// One write operation, applied both to the database and to the oracle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOp {
    /// `put(key, value)`.
    Put(Bytes, Bytes),
    /// `delete(key)`.
    Delete(Bytes),
    /// `delete_range(begin..end)`; `begin >= end` deletes nothing.
    DeleteRange(Bytes, Bytes),
    /// `merge(key, operand)` under a string-append operator joining with [`MERGE_DELIMITER`]
    /// (RocksDB's `stringappend`); the database needs one ([`string_append`]).
    Merge(Bytes, Bytes),
}

/// What the oracle's merges join operands with.
pub const MERGE_DELIMITER: &[u8] = b",";

/// `operand` appended to `existing` as the string-append operator does.
pub fn append_operand(existing: Option<&[u8]>, operand: &[u8]) -> Vec<u8> {
    match existing {
        Some(e) => [e, MERGE_DELIMITER, operand].concat(),
        None => operand.to_vec(),
    }
}

/// The merge operator [`WriteOp::Merge`] assumes: RocksDB's string append with
/// [`MERGE_DELIMITER`], with partial merges or (`partial` false) without.
pub fn string_append(partial: bool) -> Arc<dyn talus::MergeOperator> {
    let op = talus::merge::StringAppendOperator::new(MERGE_DELIMITER);
    if partial {
        Arc::new(op)
    } else {
        Arc::new(talus::merge::StringAppendTestOperator(op))
    }
}

impl WriteOp {
    /// Applies the operation to the oracle.
    pub fn apply(&self, m: &mut Model) {
        match self {
            WriteOp::Put(k, v) => {
                m.insert(k.0.clone(), v.0.clone());
            }
            WriteOp::Delete(k) => {
                m.remove(&k.0);
            }
            WriteOp::Merge(k, v) => {
                let merged = append_operand(m.get(&k.0).map(Vec::as_slice), v);
                m.insert(k.0.clone(), merged);
            }
            WriteOp::DeleteRange(b, e) => {
                if b < e {
                    let doomed: Vec<Vec<u8>> = m
                        .range::<[u8], _>((Bound::Included(&b[..]), Bound::Excluded(&e[..])))
                        .map(|(k, _)| k.clone())
                        .collect();
                    for k in doomed {
                        m.remove(&k);
                    }
                }
            }
        }
    }

    /// Adds the operation to a batch.
    pub fn add_to(&self, b: &mut WriteBatch) {
        match self {
            WriteOp::Put(k, v) => b.put(k, v),
            WriteOp::Delete(k) => b.delete(k),
            WriteOp::DeleteRange(s, e) => b.delete_range(s, e),
            WriteOp::Merge(k, v) => b.merge(k, v),
        }
    }

    /// Runs the operation alone on `db`.
    pub fn exec(&self, db: &Db, sync: bool) -> Result<()> {
        write_ops(db, std::slice::from_ref(self), sync)
    }
}

/// Writes `ops` as one atomic batch.
pub fn write_ops(db: &Db, ops: &[WriteOp], sync: bool) -> Result<()> {
    let mut b = WriteBatch::new();
    for op in ops {
        op.add_to(&mut b);
    }
    db.write(b, &WriteOptions { sync, ..Default::default() })
}

/// Options small enough that a few KiB of writes flush memtables and trigger compactions.
pub fn tiny_options(fs: Arc<dyn Fs>, write_buffer_size: usize) -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size,
        level0_file_num_compaction_trigger: 2,
        max_bytes_for_level_base: 64 << 10,
        target_file_size_base: 16 << 10,
        block_size: 256,
        fs,
        ..Default::default()
    }
}

/// A random key of 1 to 3 bytes from [`ALPHABET`].
pub fn random_key(rng: &mut impl Rng) -> Vec<u8> {
    let len = rng.gen_range(1..=3);
    (0..len).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())]).collect()
}

/// A random value: usually short, sometimes a few hundred bytes.
pub fn random_value(rng: &mut impl Rng) -> Vec<u8> {
    let len = if rng.gen_bool(0.2) { rng.gen_range(100..400) } else { rng.gen_range(0..16) };
    (0..len).map(|_| rng.gen()).collect()
}

/// A random write: mostly puts, some deletes, a few range deletes.
pub fn random_write(rng: &mut impl Rng) -> WriteOp {
    match rng.gen_range(0..10) {
        0..=5 => WriteOp::Put(random_key(rng).into(), random_value(rng).into()),
        6..=8 => WriteOp::Delete(random_key(rng).into()),
        _ => {
            let (x, y) = (random_key(rng), random_key(rng));
            WriteOp::DeleteRange(x.clone().min(y.clone()).into(), x.max(y).into())
        }
    }
}

/// Every key/value of the database, forward, under `ro`.
pub fn scan(db: &Db, ro: &ReadOptions) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    db.iter(ro).collect()
}

/// Every key/value of the database, backward, under `ro`.
pub fn scan_rev(db: &Db, ro: &ReadOptions) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    db.iter(ro).rev().collect()
}

/// The oracle's entries in `[lower, upper)`.
pub fn model_range(
    m: &Model,
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    m.iter()
        .filter(|(k, _)| lower.is_none_or(|l| k.as_slice() >= l))
        .filter(|(k, _)| upper.is_none_or(|u| k.as_slice() < u))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Reads the whole database and checks that it is self-consistent: a forward scan, a backward
/// scan and point reads of every key (and of every key of the alphabet space) agree. Returns
/// the contents.
pub fn read_consistent(db: &Db) -> std::result::Result<Model, String> {
    let ro = ReadOptions::default();
    let fwd = scan(db, &ro).map_err(|e| format!("forward scan failed: {e}"))?;
    let mut rev = scan_rev(db, &ro).map_err(|e| format!("backward scan failed: {e}"))?;
    rev.reverse();
    if fwd != rev {
        return Err(format!("forward scan {fwd:?} != reversed backward scan {rev:?}"));
    }
    if !fwd.windows(2).all(|w| w[0].0 < w[1].0) {
        return Err(format!("scan not strictly ascending: {fwd:?}"));
    }
    let m: Model = fwd.into_iter().collect();
    for k in all_keys() {
        let got = db.get(&k).map_err(|e| format!("get {k:?} failed: {e}"))?;
        if got.as_ref() != m.get(&k) {
            return Err(format!("get {k:?} = {got:?} but the scan has {:?}", m.get(&k)));
        }
    }
    Ok(m)
}

/// Asserts that the database holds exactly `m` (scans both ways and point reads).
#[track_caller]
pub fn assert_db_eq(db: &Db, m: &Model, context: &str) {
    let got = read_consistent(db).unwrap_or_else(|e| panic!("{context}: {e}"));
    if &got != m {
        panic!("{context}: database differs from the model\n{}", diff(&got, m));
    }
}

/// A readable description of how `got` differs from `want`.
pub fn diff(got: &Model, want: &Model) -> String {
    let mut out = String::new();
    for (k, v) in want {
        match got.get(k) {
            None => out += &format!("  missing {:?}\n", show(k)),
            Some(g) if g != v => {
                out += &format!("  {:?}: got {} bytes, want {} bytes\n", show(k), g.len(), v.len())
            }
            _ => {}
        }
    }
    for k in got.keys().filter(|k| !want.contains_key(*k)) {
        out += &format!("  unexpected {:?}\n", show(k));
    }
    out
}

/// A key as text when it is text.
pub fn show(k: &[u8]) -> String {
    String::from_utf8_lossy(k).into_owned()
}

/// Every key of 0 to 3 bytes over [`ALPHABET`] (85 keys), in order.
pub fn all_keys() -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    let mut last = vec![Vec::new()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for p in &last {
            for &c in ALPHABET {
                let mut k = p.clone();
                k.push(c);
                next.push(k);
            }
        }
        out.extend(next.iter().cloned());
        last = next;
    }
    out.sort();
    out
}
