//! The engines db_bench drives, behind one trait: `talus`, `memory` (an ordered map behind a
//! lock: the ceiling an ordered store could reach without durability) and `rocksdb` (RocksDB's
//! C API from `librocksdb-sys`, behind the cargo feature `rocksdb`).
//!
//! Every engine is `Send + Sync` and shared by all benchmark threads through an `Arc`; the
//! driver, key generator and timing code are the same for all of them. Errors are strings (the
//! driver prints them and exits 1).

use std::path::Path;

use super::flags::Flags;

mod memory;
#[cfg(feature = "rocksdb")]
mod rocksdb_engine;
pub(crate) mod talus_engine;
mod talus_txn;
pub mod txn;

use txn::{EngineTxn, TxnKind};

/// An engine error, already formatted.
pub type EResult<T> = Result<T, String>;

/// A reusable batch of writes in one flat buffer (no allocation per op once warmed up).
#[derive(Default)]
pub struct Ops {
    data: Vec<u8>,
    ops: Vec<(bool, usize, usize, usize)>,
}

impl Ops {
    /// Empties the batch, keeping its capacity.
    pub fn clear(&mut self) {
        self.data.clear();
        self.ops.clear();
    }
    /// Adds a put.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        let start = self.data.len();
        self.data.extend_from_slice(key);
        self.data.extend_from_slice(value);
        self.ops.push((false, start, key.len(), value.len()));
    }
    /// Adds a delete.
    pub fn delete(&mut self, key: &[u8]) {
        let start = self.data.len();
        self.data.extend_from_slice(key);
        self.ops.push((true, start, key.len(), 0));
    }
    /// Number of operations.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    /// `(is_delete, key, value)` for each operation, in order.
    pub fn iter(&self) -> impl Iterator<Item = (bool, &[u8], &[u8])> {
        self.ops.iter().map(move |&(del, start, klen, vlen)| {
            let k = &self.data[start..start + klen];
            let v = &self.data[start + klen..start + klen + vlen];
            (del, k, v)
        })
    }
}

/// A cursor, RocksDB-style.
pub trait EngineIter {
    /// Positions at the first key `>= key`.
    fn seek(&mut self, key: &[u8]);
    /// Positions at the first key.
    fn seek_to_first(&mut self);
    /// Positions at the last key.
    fn seek_to_last(&mut self);
    /// Moves forward.
    fn next(&mut self);
    /// Moves backward.
    fn prev(&mut self);
    /// True if positioned at an entry.
    fn valid(&self) -> bool;
    /// The current key (only while valid).
    fn key(&self) -> &[u8];
    /// The current value (only while valid).
    fn value(&self) -> &[u8];
    /// The first error met.
    fn status(&self) -> EResult<()>;
}

/// What db_bench needs from a key-value store.
pub trait Engine: Send + Sync {
    /// Writes one key.
    fn put(&self, key: &[u8], value: &[u8]) -> EResult<()>;
    /// Applies a batch atomically.
    fn write(&self, ops: &Ops) -> EResult<()>;
    /// Reads `key` as RocksDB's db_bench does (into a pinnable slice it then resets, no copy):
    /// the value's size, `None` if absent.
    fn get(&self, key: &[u8]) -> EResult<Option<usize>>;
    /// Merges `value` into `key` (`--merge_operator`).
    fn merge(&self, _key: &[u8], _value: &[u8]) -> EResult<()> {
        Err("merge is not supported by this engine".into())
    }
    /// Reads `key`'s value (copied), `None` if absent (randomtransaction without transactions).
    fn get_value(&self, _key: &[u8]) -> EResult<Option<Vec<u8>>> {
        Err("this engine does not run randomtransaction".into())
    }
    /// The transactions the engine was opened for (`--optimistic_transaction_db`,
    /// `--transaction_db`).
    fn txn_kind(&self) -> TxnKind {
        TxnKind::None
    }
    /// Begins a transaction (randomtransaction).
    fn begin_txn(&self) -> EResult<Box<dyn EngineTxn + '_>> {
        Err("this engine has no transactions".into())
    }
    /// Reads several keys; `sizes[i]` is the value size of `keys[i]`, or None if absent.
    fn multi_get(&self, keys: &[Vec<u8>], sizes: &mut Vec<Option<usize>>) -> EResult<()>;
    /// A new iterator over the current state.
    fn iter(&self) -> Box<dyn EngineIter + '_>;
    /// One seek of seekrandom, as RocksDB's db_bench's `SeekRandom` makes it: a new iterator,
    /// `seek(key)`, then up to `nexts` steps forward, each copying the value's first bytes into
    /// `buf` and counting key and value sizes. Returns whether the seek landed on `key` and the
    /// bytes counted. The default drives `iter()`; an engine whose iterator sits behind a
    /// foreign call per method overrides it with one call.
    fn seek_scan(&self, key: &[u8], nexts: u64, buf: &mut [u8; 256]) -> EResult<(bool, u64)> {
        let mut it = self.iter();
        it.seek(key);
        let found = it.valid() && it.key() == key;
        let mut bytes = 0u64;
        let mut j = 0;
        while j < nexts && it.valid() {
            let v = it.value();
            let n = v.len().min(buf.len());
            buf[..n].copy_from_slice(&v[..n]);
            bytes += (it.key().len() + v.len()) as u64;
            it.next();
            j += 1;
        }
        it.status()?;
        Ok((found, bytes))
    }
    /// Flushes memtables and waits.
    fn flush(&self) -> EResult<()>;
    /// Compacts the whole key range.
    fn compact(&self) -> EResult<()>;
    /// Waits until no flush or compaction is pending or running.
    fn wait_for_compaction(&self) -> EResult<()>;
    /// A property: `stats`, `levelstats`, or an engine-specific name.
    fn property(&self, name: &str) -> Option<String>;
    /// The memtable description for the header.
    fn memtable_name(&self) -> &'static str;
    /// Called once in each benchmark thread before it starts (RocksDB's db_bench sets the
    /// thread-local perf level there).
    fn thread_init(&self) {}
}

/// Opens the engine `flags.engine` at `path` (created if missing).
pub fn open(flags: &Flags, path: &Path) -> EResult<Box<dyn Engine>> {
    // Process-wide, so it reaches the worker threads; only Talus fills the perf context.
    talus::set_perf_level(talus::PerfLevel::from_rocksdb(flags.perf_level));
    if flags.num_column_families != 1 && flags.engine != "talus" {
        return Err(format!(
            "--num_column_families={} is built for the talus engine only (compare with RocksDB's \
             own db_bench, which has it)",
            flags.num_column_families
        ));
    }
    match flags.engine.as_str() {
        "memory" => Ok(Box::new(
            memory::MemoryEngine::new()
                .with_merge_operator(talus::merge::builtin_by_name(&flags.merge_operator)),
        )),
        "talus" => Ok(Box::new(talus_engine::TalusEngine::open(flags, path)?)),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => Ok(Box::new(rocksdb_engine::RocksEngine::open(flags, path)?)),
        other => Err(format!("engine {other:?} is not available in this build")),
    }
}

/// Checks the engine options derived from `flags` without touching the disk. Talus's option
/// checks apply to every engine, so one command line is valid or invalid for all of them.
pub fn check_options(flags: &Flags) -> EResult<()> {
    talus_engine::options(flags)?.validate().map_err(|e| e.to_string())
}

/// Removes the database in `path` the way its engine does (`talus::destroy_db`, RocksDB's
/// `DestroyDB`): the LOCK is taken first, so a database another process has open is refused
/// (and untouched), and only the engine's own files go; the directory is removed only if that
/// empties it. The memory engine has nothing on disk. A missing directory is fine.
pub fn destroy(flags: &Flags, path: &Path) -> EResult<()> {
    let failed = |e: &dyn std::fmt::Display| format!("destroying {}: {e}", path.display());
    match flags.engine.as_str() {
        "memory" => Ok(()),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => {
            crate::dbdir::check_rocksdb_destroyable(path)?;
            rocksdb_engine::destroy(path).map_err(|e| failed(&e))
        }
        _ => talus::destroy_db(path, &talus::Options::default()).map_err(|e| failed(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_round_trip() {
        let mut o = Ops::default();
        o.put(b"k1", b"v1");
        o.delete(b"k2");
        o.put(b"k3", b"");
        let v: Vec<_> = o.iter().map(|(d, k, v)| (d, k.to_vec(), v.to_vec())).collect();
        assert_eq!(
            v,
            vec![
                (false, b"k1".to_vec(), b"v1".to_vec()),
                (true, b"k2".to_vec(), vec![]),
                (false, b"k3".to_vec(), vec![])
            ]
        );
        assert_eq!(o.len(), 3);
        o.clear();
        assert_eq!(o.len(), 0);
    }

    /// The memory engine against a BTreeMap model, through the trait.
    #[test]
    fn memory_engine_matches_model() {
        matches_model(&memory::MemoryEngine::new());
    }

    /// RocksDB through the C API and the shim (unsafe code) against the same model, before and
    /// after a flush (reads from SST files), and after reopening.
    #[cfg(feature = "rocksdb")]
    #[test]
    fn rocksdb_engine_matches_model() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let flags = Flags::default();
        let e = rocksdb_engine::RocksEngine::open(&flags, &path).unwrap();
        e.thread_init();
        let model = matches_model(&e);
        e.flush().unwrap();
        check_model(&e, &model);
        assert!(e.property("stats").is_some_and(|s| s.contains("Compaction Stats")));
        assert!(e.property("no-such-property").is_none());
        drop(e);
        let reopen = Flags { use_existing_db: true, ..Flags::default() };
        let e = rocksdb_engine::RocksEngine::open(&reopen, &path).unwrap();
        check_model(&e, &model);
        drop(e);
        destroy(&Flags { engine: "rocksdb".into(), ..Flags::default() }, &path).unwrap();
        assert!(rocksdb_engine::RocksEngine::open(&reopen, &path).is_err(), "destroyed");
    }

    /// Random puts and batched deletes into `e`, checked against a model; returns the model.
    fn matches_model(e: &dyn Engine) -> std::collections::BTreeMap<Vec<u8>, Vec<u8>> {
        use std::collections::BTreeMap;
        let mut model = BTreeMap::new();
        let mut x = 99u64;
        let mut ops = Ops::default();
        for i in 0..3000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let k = ((x >> 40) % 500).to_be_bytes().to_vec();
            match i % 5 {
                0 => {
                    ops.clear();
                    ops.delete(&k);
                    e.write(&ops).unwrap();
                    model.remove(&k);
                }
                _ => {
                    let v = i.to_le_bytes().to_vec();
                    e.put(&k, &v).unwrap();
                    model.insert(k, v);
                }
            }
        }
        check_model(e, &model);
        model
    }

    /// Every read of `e` (get, forward and backward scans, seek, MultiGet) agrees with `model`.
    fn check_model(e: &dyn Engine, model: &std::collections::BTreeMap<Vec<u8>, Vec<u8>>) {
        for k in 0..500u64 {
            let k = k.to_be_bytes().to_vec();
            assert_eq!(e.get(&k).unwrap(), model.get(&k).map(Vec::len));
        }
        let mut it = e.iter();
        it.seek_to_first();
        let mut got = Vec::new();
        while it.valid() {
            got.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        assert_eq!(got, model.clone().into_iter().collect::<Vec<_>>());
        it.seek_to_last();
        let mut back = Vec::new();
        while it.valid() {
            back.push(it.key().to_vec());
            it.prev();
        }
        assert_eq!(back, model.keys().rev().cloned().collect::<Vec<_>>());
        // Seek then change direction.
        let target = 250u64.to_be_bytes();
        it.seek(&target);
        let first = model.range(target.to_vec()..).next().map(|(k, _)| k.clone());
        assert_eq!(it.valid().then(|| it.key().to_vec()), first);
        it.prev();
        let before = model.range(..target.to_vec()).next_back().map(|(k, _)| k.clone());
        assert_eq!(it.valid().then(|| it.key().to_vec()), before);
        // seekrandom's scan: landing, the steps taken, the bytes counted and the last value copied.
        for (k, nexts) in [(0u64, 0u64), (7, 1), (250, 10), (490, 50), (600, 3)] {
            let key = k.to_be_bytes();
            let mut buf = [0xAAu8; 256];
            let (found, bytes) = e.seek_scan(&key, nexts, &mut buf).unwrap();
            assert_eq!(found, model.contains_key(key.as_slice()), "seek {k}");
            let walked: Vec<_> = model.range(key.to_vec()..).take(nexts as usize).collect();
            let want: u64 = walked.iter().map(|(k, v)| (k.len() + v.len()) as u64).sum();
            assert_eq!(bytes, want, "seek {k} nexts {nexts}");
            if let Some((_, v)) = walked.last() {
                assert_eq!(&buf[..v.len()], v.as_slice(), "seek {k}: last value copied");
            }
        }
        let keys: Vec<Vec<u8>> = (0..10u64).map(|k| k.to_be_bytes().to_vec()).collect();
        let mut sizes = Vec::new();
        e.multi_get(&keys, &mut sizes).unwrap();
        for (k, s) in keys.iter().zip(&sizes) {
            assert_eq!(*s, model.get(k).map(Vec::len));
        }
    }
}
