//! [`TalusBackend`]: the store's [`Backend`] on a Talus [`Db`]: batches are [`WriteBatch`]es,
//! [`Durability`] maps to [`WriteOptions`] (`sync`, `disable_wal`), `sync_wal` is
//! [`Db::sync_wal`], snapshot tables are written by [`SstFileWriter`] at a Talus [`Snapshot`]
//! and installed by [`Db::ingest_external_file`]. Everything goes through the database's
//! [`Fs`], so tests run the whole store on `SimFs` and cut its power.

use std::path::Path;
use std::sync::Arc;

use talus::fs::Fs;
use talus::{
    Db, IngestOptions, Options, ReadOptions, Result, Snapshot, SstFileWriter, WriteBatch,
    WriteOptions,
};

use super::{Backend, Batch, Durability, Op, ScanFn};

/// A Talus database as the Raft store's engine.
pub struct TalusBackend {
    db: Db,
}

impl TalusBackend {
    /// Opens (creating if missing) the database in `dir` with `fs`, under Talus's default
    /// options otherwise.
    pub fn open(dir: &Path, fs: Arc<dyn Fs>) -> Result<TalusBackend> {
        let opts = Options { create_if_missing: true, fs, ..Default::default() };
        Ok(TalusBackend { db: Db::open(dir, opts)? })
    }

    /// The database.
    pub fn db(&self) -> &Db {
        &self.db
    }

    fn read_options(snap: Option<&Snapshot>) -> ReadOptions {
        ReadOptions { snapshot: snap.cloned(), ..Default::default() }
    }
}

impl Backend for TalusBackend {
    type Snap = Snapshot;

    fn name(&self) -> &'static str {
        "talus"
    }

    fn tag(&self) -> u8 {
        1
    }

    fn write(&self, batch: &Batch, durability: Durability) -> Result<()> {
        let mut b = WriteBatch::new();
        for op in batch.ops() {
            match op {
                Op::Put(k, v) => b.put(k, v),
                Op::Delete(k) => b.delete(k),
                Op::DeleteRange(s, e) => b.delete_range(s, e),
            }
        }
        let opts = WriteOptions {
            sync: durability == Durability::Synced,
            disable_wal: durability == Durability::Unlogged,
        };
        self.db.write(b, &opts)
    }

    fn sync_wal(&self) -> Result<()> {
        self.db.sync_wal()
    }

    fn get(&self, snap: Option<&Snapshot>, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match snap {
            None => self.db.get(key),
            Some(_) => self.db.get_opt(key, &Self::read_options(snap)),
        }
    }

    fn snapshot(&self) -> Snapshot {
        self.db.snapshot()
    }

    fn scan(
        &self,
        snap: Option<&Snapshot>,
        start: &[u8],
        end: &[u8],
        f: &mut ScanFn<'_>,
    ) -> Result<()> {
        for kv in self.db.range_opt(start..end, &Self::read_options(snap)) {
            let kv = kv?;
            if !f(kv.key(), kv.value())? {
                break;
            }
        }
        Ok(())
    }

    fn last_in(&self, start: &[u8], end: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        match self.db.range(start..end).next_back() {
            None => Ok(None),
            Some(kv) => {
                let kv = kv?;
                Ok(Some((kv.key().to_vec(), kv.value().to_vec())))
            }
        }
    }

    fn write_table(
        &self,
        snap: &Snapshot,
        head: &[(&[u8], &[u8])],
        start: &[u8],
        end: &[u8],
        path: &Path,
    ) -> Result<u64> {
        let mut w = SstFileWriter::open(path, self.db.options())?;
        for (k, v) in head {
            w.put(k, v)?;
        }
        self.scan(Some(snap), start, end, &mut |k, v| {
            w.put(k, v)?;
            Ok(true)
        })?;
        Ok(w.finish()?.entries)
    }

    fn ingest(&self, path: &Path) -> Result<()> {
        let opts = IngestOptions { move_files: true, ..Default::default() };
        self.db.ingest_external_file(&[path], &opts)
    }

    fn fs(&self) -> &dyn Fs {
        &*self.db.options().fs
    }
}
