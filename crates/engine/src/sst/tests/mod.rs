//! Table tests: builder + reader round trips against a model, iterator equivalence with
//! `VecIterator`, snapshots across block boundaries, caches, corruption, and the golden layout.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::cache::{Cache, LruCache};
use crate::error::{Error, Result};
use crate::fs::{RandomAccessFile, WritableFile};
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::{InternalIterator, VecIterator};
use crate::key::{self, InternalKey, ValueKind};
use crate::options::{ChecksumType, CompressionType};

use super::{Block, TableBuilder, TableBuilderOptions, TableProperties, TableReader};

mod corruption;
mod flush_policy;
mod golden;
mod keys;
mod partitioned;
mod random;
mod round_trip;

/// An in-memory writable file whose bytes stay readable through the shared buffer.
pub(crate) struct MemWritable(pub(crate) Arc<Mutex<Vec<u8>>>);

impl WritableFile for MemWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.0.lock().unwrap().extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn size(&self) -> u64 {
        self.0.lock().unwrap().len() as u64
    }
}

/// An in-memory random-access file.
pub(crate) struct MemRandom(pub(crate) Vec<u8>);

impl RandomAccessFile for MemRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let start = offset as usize;
        match self.0.get(start..start + buf.len()) {
            Some(src) => {
                buf.copy_from_slice(src);
                Ok(())
            }
            None => Err(Error::io(
                "mem read",
                std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "short"),
            )),
        }
    }
    fn size(&self) -> u64 {
        self.0.len() as u64
    }
}

pub(crate) fn opts(block_size: usize, compression: CompressionType) -> TableBuilderOptions {
    TableBuilderOptions {
        block_size,
        block_restart_interval: 4,
        bloom_bits_per_key: 10,
        compression,
        ..Default::default()
    }
}

/// Builds a table in memory from sorted `entries` and `tombstones`.
pub(crate) fn build(
    o: TableBuilderOptions,
    entries: &[(Vec<u8>, Vec<u8>)],
    tombstones: &[RangeTombstone],
) -> (Vec<u8>, TableProperties) {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let mut b = TableBuilder::new(o, Box::new(MemWritable(Arc::clone(&buf))), "mem.sst".into());
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    for t in tombstones {
        b.add_range_tombstone(t).unwrap();
    }
    let props = b.finish().unwrap();
    let bytes = buf.lock().unwrap().clone();
    assert_eq!(props.file_size, bytes.len() as u64);
    (bytes, props)
}

pub(crate) fn open(bytes: Vec<u8>, cache: Option<Arc<dyn Cache<Block>>>) -> Result<TableReader> {
    TableReader::open(Arc::new(MemRandom(bytes)), 7, "mem.sst".into(), cache)
}

/// Random sorted entries: user keys with shared prefixes, 1-3 versions each, puts and deletes,
/// at most one entry per (user key, sequence).
pub(crate) fn random_entries(rng: &mut StdRng, n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut m: BTreeMap<InternalKey, Vec<u8>> = BTreeMap::new();
    while m.len() < n {
        let len = rng.gen_range(1..12);
        let uk: Vec<u8> = (0..len).map(|_| b"abcd\xff"[rng.gen_range(0..5)]).collect();
        for _ in 0..rng.gen_range(1..4) {
            let seq = rng.gen_range(1..1000);
            let kind = if rng.gen_bool(0.2) { ValueKind::Delete } else { ValueKind::Put };
            let vlen = if kind == ValueKind::Delete { 0 } else { rng.gen_range(0..40) };
            let v: Vec<u8> = (0..vlen).map(|_| rng.gen_range(b'a'..=b'e')).collect();
            // One entry per (user key, seq), as in a real table.
            m.remove(&InternalKey::new(&uk, seq, ValueKind::Put));
            m.remove(&InternalKey::new(&uk, seq, ValueKind::Delete));
            m.insert(InternalKey::new(&uk, seq, kind), v);
        }
    }
    m.into_iter().map(|(k, v)| (k.0, v)).collect()
}

/// Drives `it` and `model` with the same random operations and compares every position.
pub(crate) fn check_equivalent(
    it: &mut dyn InternalIterator,
    entries: &[(Vec<u8>, Vec<u8>)],
    rng: &mut StdRng,
    ops: usize,
) {
    let mut model = VecIterator::new(entries.to_vec());
    let random_target = |rng: &mut StdRng| -> Vec<u8> {
        if !entries.is_empty() && rng.gen_bool(0.5) {
            let (k, _) = &entries[rng.gen_range(0..entries.len())];
            let uk = key::user_key(k);
            key::make_internal_key(uk, rng.gen_range(0..1100), ValueKind::Put)
        } else {
            let len = rng.gen_range(0..12);
            let uk: Vec<u8> = (0..len).map(|_| b"abcde\xff"[rng.gen_range(0..6)]).collect();
            key::make_internal_key(&uk, rng.gen_range(0..1100), ValueKind::Put)
        }
    };
    for step in 0..ops {
        match rng.gen_range(0..8) {
            0 => {
                it.seek_to_first();
                model.seek_to_first();
            }
            1 => {
                it.seek_to_last();
                model.seek_to_last();
            }
            2 => {
                let t = random_target(rng);
                it.seek(&t);
                model.seek(&t);
            }
            3 => {
                let t = random_target(rng);
                it.seek_for_prev(&t);
                model.seek_for_prev(&t);
            }
            4 | 5 => {
                if model.valid() {
                    it.next();
                    model.next();
                }
            }
            _ => {
                if model.valid() {
                    it.prev();
                    model.prev();
                }
            }
        }
        assert_eq!(it.valid(), model.valid(), "step {step}");
        it.status().unwrap();
        if model.valid() {
            assert_eq!(it.key(), model.key(), "step {step}");
            assert_eq!(it.value(), model.value(), "step {step}");
        }
    }
}

/// What `get(uk, seq)` must return according to the sorted entries.
fn model_get(
    entries: &[(Vec<u8>, Vec<u8>)],
    uk: &[u8],
    seq: u64,
) -> Option<(ValueKind, u64, Vec<u8>)> {
    let target = key::seek_key(uk, seq);
    let i = entries.partition_point(|e| key::compare_internal(&e.0, &target).is_lt());
    let (k, v) = entries.get(i)?;
    let p = key::parse_internal_key(k).unwrap();
    (p.user_key == uk).then(|| (p.kind, p.seq, v.clone()))
}

const ALL_COMPRESSIONS: [CompressionType; 4] =
    [CompressionType::None, CompressionType::Snappy, CompressionType::Lz4, CompressionType::Zstd];
