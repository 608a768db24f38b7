//! The read path: point lookups, MultiGet and iterators over one [`SuperVersion`].
//!
//! Who calls: `Db::get_opt`, `Db::multi_get`, `Db::iter`. Locks: none. A read loads the current
//! SuperVersion (an `Arc` swap) and the published sequence number, then searches the active
//! memtable, the immutable memtables newest first, L0 newest first, then one file per level,
//! probing each file's bloom filter before any data block. Range tombstones met on the way (in
//! the same or a newer source) hide older entries they cover.

use std::sync::Arc;

use super::core::{DbInner, SuperVersion};
use super::pinned::PinnedSlice;
use crate::error::{Error, Result};
use crate::iter::db_iter::DbIterator;
use crate::iter::merging::MergingIterator;
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::InternalIterator;
use crate::key::{SequenceNumber, ValueKind};
use crate::memtable::MemTable;
use crate::options::ReadOptions;
use crate::perf;
use crate::sst::BlockSlice;
use crate::version::level_iter::{LevelFiles, LevelIterator};

mod merge;
mod multi_get;

impl DbInner {
    /// The sequence number a read under `opts` sees: its snapshot's, or the newest visible.
    /// A snapshot taken from another database is refused ([`Error::InvalidArgument`]).
    pub(crate) fn read_sequence(&self, opts: &ReadOptions) -> Result<SequenceNumber> {
        match &opts.snapshot {
            Some(s) if !self.snapshots.owns(s) => Err(Error::InvalidArgument(format!(
                "{s:?} was taken from another database than {}",
                self.path.display()
            ))),
            Some(s) => Ok(s.sequence()),
            None => Ok(self.visible_sequence()),
        }
    }

    /// The value of `key` visible at `read_seq` in `sv`, copied. `#[inline]` here, on
    /// `get_pinned_in` and on `lookup`: each has one caller (`Db::get_in_family`,
    /// `Db::get_pinned_in_family`), and left out of line, as the compiler did or not depending
    /// on how the crate was split into codegen units, the point read paid about 50
    /// instructions more (issue 38).
    #[inline]
    pub(crate) fn get_in(
        &self,
        sv: &SuperVersion,
        key: &[u8],
        read_seq: SequenceNumber,
        fill_cache: bool,
    ) -> Result<Option<Vec<u8>>> {
        self.lookup(
            sv,
            key,
            read_seq,
            fill_cache,
            |mem| mem.get(key, read_seq).map(|(k, s, v)| (k, s, v.to_vec())),
            |b| b.to_vec(),
            |v| v,
        )
    }

    /// The value of `key` visible at `read_seq` in `sv`, left where it is (pinned).
    #[inline]
    pub(crate) fn get_pinned_in(
        &self,
        sv: &SuperVersion,
        key: &[u8],
        read_seq: SequenceNumber,
        fill_cache: bool,
    ) -> Result<Option<PinnedSlice>> {
        self.lookup(
            sv,
            key,
            read_seq,
            fill_cache,
            |mem| mem.get_pinned(key, read_seq).map(|(k, s, v)| (k, s, PinnedSlice::mem(v))),
            PinnedSlice::block,
            PinnedSlice::owned,
        )
    }

    /// The point lookup: memtables, then the files of `sv`; `from_mem` looks `key` up in one
    /// memtable, `from_block` turns a value found in a data block into the result, `from_merge`
    /// a merged value (a key whose newest entry is a merge operand takes `get_merged`).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn lookup<T>(
        &self,
        sv: &SuperVersion,
        key: &[u8],
        read_seq: SequenceNumber,
        fill_cache: bool,
        from_mem: impl Fn(&Arc<MemTable>) -> Option<(ValueKind, SequenceNumber, T)>,
        from_block: impl FnOnce(BlockSlice) -> T,
        from_merge: impl Fn(Vec<u8>) -> T,
    ) -> Result<Option<T>> {
        let merged = |this: &Self| {
            this.get_merged(sv, key, read_seq, fill_cache).map(|v| v.map(&from_merge))
        };
        let mut max_tomb = 0;
        if let Some(t) = sv.mem.fragmented_range_tombstones() {
            max_tomb = t.max_covering_seq(key, read_seq);
        }
        let found = from_mem(&sv.mem);
        perf::memtable_get(found.is_some());
        if let Some((kind, seq, v)) = found {
            if is_merge(kind, seq, max_tomb) {
                return merged(self);
            }
            return Ok(is_live(kind, seq, max_tomb).then_some(v));
        }
        for (imm, tombs) in &sv.imms {
            max_tomb = max_tomb.max(tombs.max_covering_seq(key, read_seq));
            let found = from_mem(imm);
            perf::memtable_get(found.is_some());
            if let Some((kind, seq, v)) = found {
                if is_merge(kind, seq, max_tomb) {
                    return merged(self);
                }
                return Ok(is_live(kind, seq, max_tomb).then_some(v));
            }
        }
        let mut result: Result<Option<BlockSlice>> = Ok(None);
        let mut merge = false;
        let mut blob = false;
        sv.version.for_each_file_for_key(key, |level, f| {
            let reader = match self.table_cache.reader(f, Some(level)) {
                Ok(r) => r,
                Err(e) => {
                    result = Err(e);
                    return false;
                }
            };
            max_tomb = max_tomb.max(reader.range_tombstones().max_covering_seq(key, read_seq));
            match reader.get_pinned(key, read_seq, fill_cache) {
                Ok(Some((kind, seq, v))) => {
                    merge = is_merge(kind, seq, max_tomb);
                    blob = kind == ValueKind::BlobIndex;
                    result = Ok(is_live(kind, seq, max_tomb).then_some(v));
                    false
                }
                Ok(None) => true,
                Err(e) => {
                    result = Err(e);
                    false
                }
            }
        });
        if merge {
            return merged(self);
        }
        match result? {
            Some(index) if blob => Ok(Some(from_merge(self.blobs.get(key, &index)?))),
            found => Ok(found.map(from_block)),
        }
    }

    /// Builds the merged iterator over every source of `sv`, plus all their range tombstones.
    pub(crate) fn new_db_iterator(
        &self,
        sv: &SuperVersion,
        opts: &ReadOptions,
        read_seq: SequenceNumber,
    ) -> DbIterator {
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::with_capacity(
            2 + sv.imms.len() + sv.version.num_levels() + sv.version.level_files(0).len(),
        );
        let mut tombstones: Vec<RangeTombstone> = Vec::new();
        children.push(sv.mem.iter());
        if sv.mem.has_range_tombstones() {
            tombstones.extend(sv.mem.range_tombstones());
        }
        for (imm, t) in &sv.imms {
            children.push(imm.iter());
            tombstones.extend(t.to_tombstones());
        }
        let mut open_error = None;
        for f in sv.version.level_files(0) {
            match self.table_cache.reader(f, Some(0)) {
                Ok(r) => {
                    tombstones.extend(r.range_tombstones().to_tombstones());
                    children.push(r.to_arc().iter(opts.fill_cache));
                }
                Err(e) => open_error = Some(e),
            }
        }
        for level in 1..sv.version.num_levels() {
            let files = sv.version.level_files(level);
            if files.is_empty() {
                continue;
            }
            for f in files {
                if f.num_deletions == 0 {
                    continue;
                }
                match self.table_cache.reader(f, Some(level)) {
                    Ok(r) => tombstones.extend(r.range_tombstones().to_tombstones()),
                    Err(e) => open_error = Some(e),
                }
            }
            children.push(Box::new(LevelIterator::new(
                LevelFiles::Level(Arc::clone(&sv.version), level),
                self.table_cache.clone(),
                opts.fill_cache,
            )));
        }
        if let Some(e) = open_error {
            children.push(Box::new(crate::iter::EmptyIterator::with_error(e)));
        }
        let merged: Box<dyn InternalIterator> = Box::new(MergingIterator::new(children));
        DbIterator::new(
            merged,
            read_seq,
            (!tombstones.is_empty()).then(|| Arc::new(FragmentedTombstones::new(tombstones))),
            opts.iterate_lower_bound.clone(),
            opts.iterate_upper_bound.clone(),
        )
        .with_merge_operator(sv.opts.merge_operator.clone())
        .with_blob_source(Some(Arc::clone(&self.blobs) as Arc<dyn crate::iter::BlobValues>))
    }
}

/// True if the newest entry found (`kind` at `seq`) is a merge operand that no range tombstone
/// met so far deletes: the value is its operands merged (`merge.rs`).
fn is_merge(kind: ValueKind, seq: SequenceNumber, max_tomb: SequenceNumber) -> bool {
    kind == ValueKind::Merge && seq >= max_tomb
}

/// True if the newest entry found (`kind` at `seq`) is a value that no range tombstone met so
/// far (the highest covering one is at `max_tomb`) deletes.
/// A `BlobIndex` is a value too: its bytes are read from the blob file by the caller.
fn is_live(kind: ValueKind, seq: SequenceNumber, max_tomb: SequenceNumber) -> bool {
    matches!(kind, ValueKind::Put | ValueKind::BlobIndex) && seq >= max_tomb
}

fn visible(
    kind: ValueKind,
    seq: SequenceNumber,
    max_tomb: SequenceNumber,
    v: &[u8],
) -> Option<Vec<u8>> {
    is_live(kind, seq, max_tomb).then(|| v.to_vec())
}
