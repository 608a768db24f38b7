//! Row writes and their index entries: the one place that turns row operations into an engine
//! WriteBatch, under the per-table write lock (`shared::TableShared::lock`) that makes
//! check-then-write atomic.
//!
//! Callers: [`crate::Table`]'s insert/update/delete (one op, or `insert_many`) and
//! [`crate::Transaction::commit`] (many ops, maybe several tables), both through
//! [`commit_ops`]; `Transaction`'s call-time checks and `build` also use [`Ctx`] to evaluate
//! ops against a snapshot. Locking: [`commit_ops`] takes the write lock of every table
//! involved, in table-id order, reads what the ops need (primary-key and unique-index checks,
//! old rows) at the latest state, writes one batch, then bumps the catalog's commit clock and
//! records the written primary keys (for transaction conflict detection) before unlocking.
//! On any error nothing is written.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use rustc_hash::FxBuildHasher;

use crate::error::{Result, TableError};
use crate::keycodec::{encode_value, put_index_id};
use crate::meta::{IndexMeta, IndexState, TableMeta, PRIMARY};
use crate::rowcodec::{decode_row, encode_row};
use crate::schema::Value;
use crate::shared::{CatalogInner, TableShared, WriteState};
use crate::stats::{Counters, TableStats};
use crate::storage::{Batch, Storage};

/// Conflict history is pruned once it holds this many keys.
const RECENT_PRUNE_AT: usize = 1 << 16;

/// One row operation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op<'a> {
    Insert(&'a [Value]),
    Update(&'a [Value]),
    Delete(&'a [Value]),
}

/// The primary-key entry key of a (checked) row.
pub(crate) fn pk_key_of_row(m: &TableMeta, row: &[Value]) -> Vec<u8> {
    let mut k = Vec::with_capacity(16);
    put_index_id(&mut k, m.id);
    for (p, c) in m.pk.iter().zip(&m.pk_cols) {
        encode_value(&mut k, &row[*p], c);
    }
    k
}

/// The primary-key entry key of primary key values, checked against the schema.
pub(crate) fn pk_key(m: &TableMeta, pk: &[Value]) -> Result<Vec<u8>> {
    if pk.len() != m.pk.len() {
        let col = m.def.columns[m.pk[pk.len().min(m.pk.len() - 1)]].name.as_str();
        return Err(TableError::schema(
            col,
            format!("primary key has {} columns, got {}", m.pk.len(), pk.len()),
        ));
    }
    let mut k = Vec::with_capacity(16);
    put_index_id(&mut k, m.id);
    for ((p, c), v) in m.pk.iter().zip(&m.pk_cols).zip(pk) {
        if !v.fits(c.ty) || matches!(v, Value::Null) {
            return Err(TableError::schema(
                &m.def.columns[*p].name,
                format!("{v:?} is not a {:?} key value", c.ty),
            ));
        }
        encode_value(&mut k, v, c);
    }
    Ok(k)
}

/// The entry of index `ix` for a row whose primary key encodes (without index id) to
/// `pk_enc`: `(key, value, unique_form)`. A unique index without NULLs in the row maps
/// `index cols -> pk`; otherwise the key is `index cols + pk` with an empty value.
pub(crate) fn index_entry(
    ix: &IndexMeta,
    row: &[Value],
    pk_enc: &[u8],
) -> (Vec<u8>, Vec<u8>, bool) {
    let mut k = Vec::with_capacity(32);
    let has_null = put_index_cols(&mut k, ix, row);
    if ix.def.unique && !has_null {
        (k, pk_enc.to_vec(), true)
    } else {
        k.extend_from_slice(pk_enc);
        (k, Vec::new(), false)
    }
}

/// Appends index `ix`'s id and its columns of `row` to `out`; true if one of them is NULL.
fn put_index_cols(out: &mut Vec<u8>, ix: &IndexMeta, row: &[Value]) -> bool {
    put_index_id(out, ix.id);
    let mut has_null = false;
    for (p, c) in ix.cols.iter().zip(&ix.key_cols) {
        has_null |= matches!(row[*p], Value::Null);
        encode_value(out, &row[*p], c);
    }
    has_null
}

/// Whether [`Ctx::apply`] may write index `ix`'s entry of an inserted row blind, from a scratch
/// buffer: a ready non-unique index (no check, no overlay, no building log).
fn blind_on_insert(ix: &IndexMeta) -> bool {
    !ix.def.unique && ix.state == IndexState::Ready
}

/// Values read at a transaction's snapshot, by key: stable for the transaction's life, so a
/// row it read is not read again when it updates or deletes it. FxHash, as the overlay below:
/// looked up at every read of a transaction (SipHash was 4% of TPC-C's instructions), and its
/// keys are the transaction's own reads.
pub(crate) type ReadCache = Mutex<HashMap<Vec<u8>, Option<Vec<u8>>, FxBuildHasher>>;

/// A batch's own writes by key (`None`: a delete), read before the engine. Hashed with FxHash,
/// not SipHash: it is built for every inserted row (the primary key) and lives for one batch or
/// transaction, whose keys are the writer's own.
type Overlay = HashMap<Vec<u8>, Option<Vec<u8>>, FxBuildHasher>;

/// What a batch under construction has staged, without the read view: a transaction keeps it
/// between its ops ([`Ctx::resume`], [`Ctx::suspend`]) and commits it as is when nothing it
/// was built from changed (see [`commit_ops`]).
pub(crate) struct Staged<S: Storage> {
    overlay: Overlay,
    batch: S::Batch,
    delta: TableStats,
    pks: Vec<(usize, Vec<u8>)>,
    building: Vec<(usize, Vec<u8>, Option<Vec<u8>>)>,
}

impl<S: Storage> Default for Staged<S> {
    fn default() -> Self {
        Staged {
            overlay: Overlay::default(),
            batch: S::Batch::default(),
            delta: TableStats::default(),
            pks: Vec::new(),
            building: Vec::new(),
        }
    }
}

impl<S: Storage> Staged<S> {
    /// The staged write (or delete, `None`) of `key`, if any.
    pub(crate) fn overlay(&self, key: &[u8]) -> Option<&Option<Vec<u8>>> {
        self.overlay.get(key)
    }
}

/// A batch under construction over a read view (latest state or a snapshot), with the
/// batch's own writes overlaid on the reads.
pub(crate) struct Ctx<'a, S: Storage> {
    db: &'a S,
    ro: &'a S::ReadOptions,
    counters: &'a Counters,
    cache: Option<&'a ReadCache>,
    overlay: Overlay,
    pub batch: S::Batch,
    pub delta: TableStats,
    /// Primary keys written, with the position of their table in the caller's list.
    pub pks: Vec<(usize, Vec<u8>)>,
    /// Writes to building indexes: (table position, key, value or `None` for a delete).
    pub building: Vec<(usize, Vec<u8>, Option<Vec<u8>>)>,
    /// A reused buffer for the index keys [`Ctx::apply`] writes blind.
    scratch: Vec<u8>,
}

impl<'a, S: Storage> Ctx<'a, S> {
    pub(crate) fn new(db: &'a S, ro: &'a S::ReadOptions, counters: &'a Counters) -> Ctx<'a, S> {
        Ctx {
            db,
            ro,
            counters,
            cache: None,
            overlay: Overlay::default(),
            batch: S::Batch::default(),
            delta: TableStats::default(),
            pks: Vec::new(),
            building: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// A context continuing from `st` (a transaction's staged ops) over `ro`, remembering what
    /// it reads in `cache` (only for a snapshot, which never changes).
    pub(crate) fn resume(
        db: &'a S,
        ro: &'a S::ReadOptions,
        counters: &'a Counters,
        st: Staged<S>,
        cache: Option<&'a ReadCache>,
    ) -> Ctx<'a, S> {
        Ctx {
            db,
            ro,
            counters,
            cache,
            overlay: st.overlay,
            batch: st.batch,
            delta: st.delta,
            pks: st.pks,
            building: st.building,
            scratch: Vec::new(),
        }
    }

    /// What this context staged.
    pub(crate) fn suspend(self) -> Staged<S> {
        Staged {
            overlay: self.overlay,
            batch: self.batch,
            delta: self.delta,
            pks: self.pks,
            building: self.building,
        }
    }

    /// Reads `key`: the batch's own write if any, else the read cache, else the engine (one
    /// counted point read).
    pub(crate) fn read(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if let Some(v) = self.overlay.get(key) {
            return Ok(v.clone());
        }
        if let Some(v) = self.cache.and_then(|c| c.lock().get(key).cloned()) {
            return Ok(v);
        }
        self.counters.point_reads.fetch_add(1, Ordering::Relaxed);
        let v = self.db.get_at(key, self.ro)?;
        if let Some(c) = self.cache {
            c.lock().insert(key.to_vec(), v.clone());
        }
        Ok(v)
    }

    fn put(&mut self, key: Vec<u8>, v: Vec<u8>) {
        self.batch.put(&key, &v);
        self.overlay.insert(key, Some(v));
    }

    fn del(&mut self, key: Vec<u8>) {
        self.batch.delete(&key);
        self.overlay.insert(key, None);
    }

    /// Reads and decodes the row stored under primary-key entry `key`.
    pub(crate) fn read_row(&mut self, m: &TableMeta, key: &[u8]) -> Result<Option<Vec<Value>>> {
        match self.read(key)? {
            None => Ok(None),
            Some(v) => decode_row(&v, &m.types).map(Some).map_err(|e| {
                TableError::corrupt(format!("table {}: row under key {key:02x?}: {e}", m.def.name))
            }),
        }
    }

    fn write_entry(
        &mut self,
        t: usize,
        ix: &IndexMeta,
        key: Vec<u8>,
        val: Option<Vec<u8>>,
        unique_form: bool,
    ) {
        self.delta.index_entries_written += 1;
        if ix.state == IndexState::Building {
            self.building.push((t, key.clone(), val.clone()));
        }
        if unique_form {
            match val {
                Some(v) => self.put(key, v),
                None => self.del(key),
            }
        } else {
            // Non-unique entries are never read by a write: blind, and not in the overlay.
            self.delta.blind_index_writes += 1;
            match val {
                Some(v) => self.batch.put(&key, &v),
                None => self.batch.delete(&key),
            }
        }
    }

    /// Checks that unique entry `key` of a ready index is free (owned by nobody, or by `pk_enc`).
    fn check_unique(
        &mut self,
        m: &TableMeta,
        ix: &IndexMeta,
        key: &[u8],
        pk_enc: &[u8],
    ) -> Result<()> {
        if ix.state != IndexState::Ready {
            return Ok(());
        }
        match self.read(key)? {
            Some(owner) if owner != pk_enc => Err(TableError::DuplicateKey {
                table: m.def.name.clone(),
                index: ix.def.name.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// Applies one op of table `m` (at position `t` in the caller's table list): checks first,
    /// then stages the writes, so a refused op stages nothing. Returns false for an update or
    /// delete of an absent row.
    pub(crate) fn apply(&mut self, t: usize, m: &TableMeta, op: Op<'_>) -> Result<bool> {
        match op {
            Op::Insert(row) => {
                m.def.check_row(row)?;
                let pk = pk_key_of_row(m, row);
                if self.read(&pk)?.is_some() {
                    return Err(TableError::DuplicateKey {
                        table: m.def.name.clone(),
                        index: PRIMARY.into(),
                    });
                }
                // Checks first (unique entries), then the writes: a refused insert stages
                // nothing. A ready non-unique index's entry goes straight into the batch from
                // one reused buffer (no allocation per entry: the insert benchmark's 3 indexes).
                for ix in m.indexes.iter().filter(|ix| ix.def.unique) {
                    let (k, _, uf) = index_entry(ix, row, &pk[4..]);
                    if uf {
                        self.check_unique(m, ix, &k, &pk[4..])?;
                    }
                }
                let mut key = std::mem::take(&mut self.scratch);
                for ix in &m.indexes {
                    if blind_on_insert(ix) {
                        key.clear();
                        put_index_cols(&mut key, ix, row);
                        key.extend_from_slice(&pk[4..]);
                        self.delta.index_entries_written += 1;
                        self.delta.blind_index_writes += 1;
                        self.batch.put(&key, &[]);
                    } else {
                        let (k, v, uf) = index_entry(ix, row, &pk[4..]);
                        self.write_entry(t, ix, k, Some(v), uf);
                    }
                }
                self.scratch = key;
                let mut val = Vec::with_capacity(64);
                encode_row(&mut val, row);
                self.put(pk.clone(), val);
                self.pks.push((t, pk));
                self.delta.rows_inserted += 1;
                Ok(true)
            }
            Op::Update(row) => {
                m.def.check_row(row)?;
                let pk = pk_key_of_row(m, row);
                let Some(old) = self.read_row(m, &pk)? else {
                    return Ok(false);
                };
                let mut changes = Vec::new();
                for ix in &m.indexes {
                    let o = index_entry(ix, &old, &pk[4..]);
                    let n = index_entry(ix, row, &pk[4..]);
                    if o.0 != n.0 {
                        if n.2 {
                            self.check_unique(m, ix, &n.0, &pk[4..])?;
                        }
                        changes.push((ix, o, n));
                    }
                }
                for (ix, o, n) in changes {
                    self.write_entry(t, ix, o.0, None, o.2);
                    self.write_entry(t, ix, n.0, Some(n.1), n.2);
                }
                let mut val = Vec::with_capacity(64);
                encode_row(&mut val, row);
                self.put(pk.clone(), val);
                self.pks.push((t, pk));
                self.delta.rows_updated += 1;
                Ok(true)
            }
            Op::Delete(pkv) => {
                let pk = pk_key(m, pkv)?;
                let Some(old) = self.read_row(m, &pk)? else {
                    return Ok(false);
                };
                for ix in &m.indexes {
                    let (k, _, uf) = index_entry(ix, &old, &pk[4..]);
                    self.write_entry(t, ix, k, None, uf);
                }
                self.del(pk.clone());
                self.pks.push((t, pk));
                self.delta.rows_deleted += 1;
                Ok(true)
            }
        }
    }
}

/// The primary-key entry key an op writes (for the conflict check before applying).
pub(crate) fn op_pk_key(m: &TableMeta, op: Op<'_>) -> Result<Vec<u8>> {
    match op {
        Op::Insert(row) | Op::Update(row) => {
            m.def.check_row(row)?;
            Ok(pk_key_of_row(m, row))
        }
        Op::Delete(pk) => pk_key(m, pk),
    }
}

/// A transaction's staged batch offered to [`commit_ops`], with the table metadata each
/// table's ops were staged against.
pub(crate) struct StagedCommit<'s, S: Storage> {
    /// Per table position, the metadata at staging time (`None`: changed between two ops).
    pub metas: &'s [Option<Arc<TableMeta>>],
    /// The staged batch.
    pub staged: Staged<S>,
}

/// Whether a batch staged against `staged_metas` can be written as is now: the same metadata
/// (no index created, dropped or finished since), and no unique or building index (those need
/// the checks and bookkeeping that only re-applying the ops at the latest state does). With the
/// conflict check passed, every row the ops read is unchanged since the snapshot, so the staged
/// index and row entries are exactly what re-applying them would write.
fn reusable(staged_metas: &[Option<Arc<TableMeta>>], now: &[Arc<TableMeta>]) -> bool {
    staged_metas.len() == now.len()
        && staged_metas.iter().zip(now).all(|(s, n)| {
            s.as_ref().is_some_and(|s| Arc::ptr_eq(s, n))
                && n.indexes.iter().all(|ix| ix.state == IndexState::Ready && !ix.def.unique)
        })
}

/// Applies `ops` (each naming its table by position in `tables`) as one atomic batch under the
/// tables' write locks. With `begin = Some(clock)`, first refuses with
/// [`TableError::Conflict`] if any written primary key was committed by someone after `clock`;
/// then writes `staged` as is when [`reusable`], else re-applies `ops` at the latest state.
pub(crate) fn commit_ops<S: Storage>(
    cat: &CatalogInner<S>,
    tables: &[Arc<TableShared>],
    ops: &[(usize, Op<'_>)],
    begin: Option<u64>,
    staged: Option<StagedCommit<'_, S>>,
) -> Result<Vec<bool>> {
    let mut order: Vec<usize> = (0..tables.len()).collect();
    let metas_now: Vec<u32> = tables.iter().map(|t| t.meta().id).collect();
    order.sort_by_key(|&i| metas_now[i]);
    let mut guards: Vec<Option<MutexGuard<'_, WriteState>>> =
        (0..tables.len()).map(|_| None).collect();
    for &i in &order {
        guards[i] = Some(tables[i].lock.lock());
    }
    let metas: Vec<Arc<TableMeta>> = tables.iter().map(|t| t.meta()).collect();
    for (t, m) in tables.iter().zip(&metas) {
        if t.dropped.load(Ordering::Acquire) {
            return Err(TableError::NoSuchTable(m.def.name.clone()));
        }
    }
    if let Some(b) = begin {
        for &(t, op) in ops {
            let k = op_pk_key(&metas[t], op)?;
            if let Some(g) = &guards[t] {
                if g.recent.get(&k).is_some_and(|&c| c > b) {
                    return Err(TableError::Conflict { table: metas[t].def.name.clone() });
                }
            }
        }
    }
    let ro = cat.db.read_options(None);
    let (mut ctx, results) = match staged {
        Some(sc) if reusable(sc.metas, &metas) => {
            (Ctx::resume(&cat.db, &ro, &cat.stats, sc.staged, None), vec![true; ops.len()])
        }
        _ => {
            let mut ctx = Ctx::new(&cat.db, &ro, &cat.stats);
            ctx.overlay.reserve(ops.len());
            let mut results = Vec::with_capacity(ops.len());
            for &(t, op) in ops {
                results.push(ctx.apply(t, &metas[t], op)?);
            }
            (ctx, results)
        }
    };
    if ctx.batch.is_empty() {
        return Ok(results);
    }
    let batch = std::mem::take(&mut ctx.batch);
    cat.db.write_batch(batch, &cat.write_options)?;
    let clock = cat.clock.fetch_add(1, Ordering::AcqRel) + 1;
    // With no transaction open, no history is needed: one that begins later reads a clock at
    // or past `clock` (it takes the clock under the `active` lock, after our increment).
    let min_active = cat.active.lock().keys().next().copied();
    if min_active.is_some() {
        for (t, k) in ctx.pks.drain(..) {
            if let Some(g) = guards[t].as_mut() {
                g.recent.insert(k, clock);
            }
        }
    }
    for (t, k, v) in ctx.building.drain(..) {
        if let Some(map) = guards[t].as_mut().and_then(|g| g.building_touched.as_mut()) {
            map.insert(k, v);
        }
    }
    for g in guards.iter_mut().flatten() {
        if g.recent.len() > RECENT_PRUNE_AT || (min_active.is_none() && !g.recent.is_empty()) {
            match min_active {
                None => g.recent.clear(),
                Some(b) => g.recent.retain(|_, c| *c > b),
            }
        }
    }
    cat.stats.add(&ctx.delta);
    Ok(results)
}
