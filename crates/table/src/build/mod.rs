//! `create_index` on a populated table (`Catalog::create_index`).
//!
//! 1. Under the DDL lock and the table's write lock: validate the index, give it an id, record
//!    it in the catalog as *building* and install the new metadata; from then on every write
//!    maintains the index with blind puts and deletes (and notes the keys it wrote). An engine
//!    snapshot is taken under the same lock, so every write is either in the snapshot or
//!    maintains the index itself. A *unique* index keeps the table's write lock for the whole
//!    build (writes wait), because its entries cannot be checked before the index is complete.
//! 2. Scan the snapshot's rows, derive each row's index entry, external-sort them in
//!    `sort_memory_bytes` (`extsort`), and write the sorted entries to SST files with the
//!    storage's [`crate::storage::SstWriter`] (a duplicate unique key stops the build with
//!    `DuplicateKey`).
//! 3. Ingest the files with `ingest_behind` (bottommost level, sequence 0): every write that
//!    ran meanwhile is newer and wins over the snapshot's entries, deletes included. If the
//!    bottommost level already holds keys of the new index (concurrent writes reached it), or
//!    the engine cannot ingest behind (RocksDB without `allow_ingest_behind`), the files are
//!    ingested normally (newest) in step 4 instead.
//! 4. The final catch-up, under the table's write lock (writes wait): the fallback ingestion if
//!    needed, then the last write of every index key written during the build is replayed in
//!    batches (so it wins even if compaction dropped its tombstone before the ingestion, or
//!    the ingestion was newer), then the index is recorded as *ready* in the catalog. The index
//!    is not readable before that, so nobody sees an intermediate state. The replayed map is
//!    the memory cost of writes that run during a build.
//!
//! Failure anywhere drops the index (range delete of its keys + catalog entry, one batch); a
//! crash leaves it *building*, and `Catalog::open` drops it. Either no index or a complete one.

mod extsort;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use talus::WriteOptions;

use crate::catalog::Catalog;
use crate::shared::{index_range, table_key, CatalogInner};

use crate::error::{Result, TableError};
use crate::meta::{IndexState, TableMeta};
use crate::rowcodec::decode_row;
use crate::schema::IndexDef;
use crate::shared::TableShared;
use crate::storage::{Batch, Cursor, Range, SstWriter, Storage, Walk};
use crate::write::index_entry;

use extsort::ExternalSorter;

/// Options of [`Catalog::create_index`].
#[derive(Clone, Debug)]
pub struct CreateIndexOptions {
    /// Memory budget of the external sort: a sorted run is spilled to a temp file when the
    /// buffered entries reach this many bytes.
    pub sort_memory_bytes: usize,
    /// Where the sorted runs and SST files go (`None`: `<db>/tmp`).
    pub temp_dir: Option<PathBuf>,
}

impl Default for CreateIndexOptions {
    fn default() -> Self {
        CreateIndexOptions { sort_memory_bytes: 64 << 20, temp_dir: None }
    }
}

/// Index entries replayed per batch by the catch-up step.
const REPLAY_BATCH: u32 = 10_000;

/// Target size of one ingested SST file.
const SST_TARGET_BYTES: u64 = 64 << 20;

fn sync_write<S: Storage>(cat: &CatalogInner<S>, b: S::Batch) -> Result<()> {
    Ok(cat.db.write_batch(b, &WriteOptions { sync: true, ..Default::default() })?)
}

/// `meta` with index `id` set to `state` (or removed, with `None`).
fn with_index_state(meta: &TableMeta, id: u32, state: Option<IndexState>) -> Result<TableMeta> {
    let mut def = meta.def.clone();
    let mut ids = Vec::new();
    def.indexes.clear();
    for ix in &meta.indexes {
        let st = if ix.id == id { state } else { Some(ix.state) };
        if let Some(st) = st {
            def.indexes.push(ix.def.clone());
            ids.push((ix.id, st));
        }
    }
    TableMeta::resolve(&def, meta.id, &ids)
}

pub(crate) fn create_index<S: Storage>(
    cat: &Catalog<S>,
    table: &str,
    def: IndexDef,
    opts: &CreateIndexOptions,
) -> Result<()> {
    let inner = &cat.inner;
    let shared = inner
        .tables
        .read()
        .get(table)
        .cloned()
        .ok_or_else(|| TableError::NoSuchTable(table.to_string()))?;
    // Step 1.
    let (id, unique_guard, snapshot) = {
        let mut next = inner.ddl.lock();
        let mut guard = shared.lock.lock();
        if shared.dropped.load(Ordering::Acquire) {
            return Err(TableError::NoSuchTable(table.to_string()));
        }
        let meta = shared.meta();
        let id = *next;
        let ix =
            TableMeta::resolve_index(&meta.def, &meta.indexes, &def, id, IndexState::Building)?;
        let mut m = (*meta).clone();
        m.indexes.push(ix);
        let new_next =
            id.checked_add(1).ok_or_else(|| TableError::corrupt("index ids exhausted"))?;
        let mut b = S::Batch::default();
        b.put(&[0, 0, 0, 0, b'n'], &new_next.to_be_bytes());
        b.put(&table_key(table), &m.encode());
        sync_write(inner, b)?;
        *next = new_next;
        shared.set_meta(m);
        guard.building_touched = Some(Default::default());
        let snapshot = inner.db.take_snapshot();
        (id, if def.unique { Some(guard) } else { None }, snapshot)
    };
    let fs = inner.db.scratch_fs();
    let mut paths = Vec::new();
    let r = build(inner, &shared, table, id, opts, snapshot, &mut paths);
    let mut guard = match unique_guard {
        Some(g) => g,
        None => shared.lock.lock(),
    };
    let r = r.and_then(|behind_ok| {
        if !behind_ok {
            inner.db.ingest(&paths)?;
        }
        let touched = guard.building_touched.take().unwrap_or_default();
        let mut b = S::Batch::default();
        for (k, v) in touched {
            match v {
                Some(v) => b.put(&k, &v),
                None => b.delete(&k),
            }
            if b.count() >= REPLAY_BATCH {
                sync_write(inner, std::mem::take(&mut b))?;
            }
        }
        if !b.is_empty() {
            sync_write(inner, b)?;
        }
        if shared.dropped.load(Ordering::Acquire) {
            return Err(TableError::NoSuchTable(table.to_string()));
        }
        let m = with_index_state(&shared.meta(), id, Some(IndexState::Ready))?;
        let mut b = S::Batch::default();
        b.put(&table_key(table), &m.encode());
        sync_write(inner, b)?;
        shared.set_meta(m);
        Ok(())
    });
    guard.building_touched = None;
    for p in &paths {
        if fs.exists(p) {
            let _ = fs.remove_file(p);
        }
    }
    if let Err(e) = r {
        if !shared.dropped.load(Ordering::Acquire) {
            let m = with_index_state(&shared.meta(), id, None)?;
            let mut b = S::Batch::default();
            let (lo, hi) = index_range(id);
            b.delete_range(&lo, &hi);
            b.put(&table_key(table), &m.encode());
            sync_write(inner, b)?;
            shared.set_meta(m);
        }
        return Err(e);
    }
    Ok(())
}

/// Steps 2 and 3: writes the sorted entries to SST files (their paths pushed to `paths`) and
/// tries to ingest them behind; returns false if that was refused (step 4 ingests them then).
fn build<S: Storage>(
    inner: &Arc<CatalogInner<S>>,
    shared: &Arc<TableShared>,
    table: &str,
    id: u32,
    opts: &CreateIndexOptions,
    snapshot: S::Snapshot,
    paths: &mut Vec<PathBuf>,
) -> Result<bool> {
    let db = &inner.db;
    let fs = db.scratch_fs();
    let dir = opts.temp_dir.clone().unwrap_or_else(|| db.dir().join("tmp"));
    fs.create_dir_all(&dir)?;
    let meta = shared.meta();
    let ix = meta
        .indexes
        .iter()
        .find(|i| i.id == id)
        .ok_or_else(|| TableError::NoSuchIndex(table.to_string()))?
        .clone();
    let prefix = format!("talus-index-{id}");
    let mut sorter = ExternalSorter::new(fs.clone(), &dir, &prefix, opts.sort_memory_bytes);
    let (lower, upper) = index_range(meta.id);
    let range = Range { lower, upper, snapshot: Some(&snapshot), fill_cache: false };
    let mut it = db.cursor(range, Walk::Forward);
    while it.valid() {
        let row = decode_row(it.value(), &meta.types)?;
        let (ik, iv, _) = index_entry(&ix, &row, it.key().get(4..).unwrap_or(&[]));
        sorter.push(ik, iv)?;
        it.advance();
    }
    it.status()?;
    drop(it);
    drop(snapshot);
    let mut merged = sorter.finish()?;
    let mut writer: Option<S::SstWriter> = None;
    let mut last: Option<Vec<u8>> = None;
    while let Some((k, v)) = merged.next_entry()? {
        if last.as_deref() == Some(k.as_slice()) {
            return Err(TableError::DuplicateKey {
                table: table.to_string(),
                index: ix.def.name.clone(),
            });
        }
        if writer.is_none() {
            let p = dir.join(format!("{prefix}-{}.sst", paths.len()));
            paths.push(p.clone());
            writer = Some(db.sst_writer(&p)?);
        }
        if let Some(w) = writer.as_mut() {
            w.put(&k, &v)?;
            if w.file_size() >= SST_TARGET_BYTES {
                if let Some(w) = writer.take() {
                    w.finish()?;
                }
            }
        }
        last = Some(k);
    }
    if let Some(w) = writer.take() {
        w.finish()?;
    }
    drop(merged);
    if paths.is_empty() {
        return Ok(true);
    }
    let hook = inner.build_hook.lock().clone();
    if let Some(h) = &hook {
        h("before_ingest");
    }
    if db.ingest_behind(paths)? {
        return Ok(true);
    }
    if let Some(h) = &hook {
        h("ingest_behind_refused");
    }
    Ok(false)
}

impl<S: Storage> Catalog<S> {
    /// Builds index `def` on the populated table `table`; see [`crate::CreateIndexOptions`] and
    /// the `build` module for the steps. Writes continue meanwhile (non-unique indexes).
    pub fn create_index(
        &self,
        table: &str,
        def: IndexDef,
        opts: &crate::CreateIndexOptions,
    ) -> Result<()> {
        create_index(self, table, def, opts)
    }
}
