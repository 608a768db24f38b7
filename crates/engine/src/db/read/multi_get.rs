//! Batched MultiGet over one [`SuperVersion`]: the keys are sorted once, looked up in the
//! memtables one by one, then handed to each table file as one sorted batch
//! ([`TableReader::multi_get`](crate::sst::TableReader::multi_get): one filter fetch, one
//! index cursor, the needed data blocks fetched together). Answers are those of
//! [`DbInner::get_in`] per key, at one read sequence (snapshot-consistent), in caller order.
//!
//! Who calls: `Db::multi_get`. Locks: none (the block cache's shard locks inside readers).

use crate::db::core::{DbInner, SuperVersion};
use crate::error::{Error, Result};
use crate::iter::range_del::FragmentedTombstones;
use crate::key::SequenceNumber;
use crate::perf;
use crate::sst::filter::filter_hash;
use crate::sst::reader::MultiGetKey;
use crate::version::FileMetaData;

use super::{is_live, visible};

/// A key still looking for its newest entry.
struct Pending<'k> {
    /// Position in the caller's slice.
    pos: usize,
    key: &'k [u8],
    hash: u64,
    /// Highest sequence of a range tombstone covering the key met so far.
    max_tomb: SequenceNumber,
}

type Answer = Result<Option<Vec<u8>>>;

impl DbInner {
    /// The values of `keys` visible at `read_seq` in `sv`, in the order of `keys`.
    pub(crate) fn multi_get_in<K: AsRef<[u8]>>(
        &self,
        sv: &SuperVersion,
        keys: &[K],
        read_seq: SequenceNumber,
        fill_cache: bool,
    ) -> Vec<Answer> {
        perf::multiget_keys(keys.len() as u64);
        let mut answers: Vec<Option<Answer>> = (0..keys.len()).map(|_| None).collect();
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by(|&a, &b| keys[a].as_ref().cmp(keys[b].as_ref()));

        let mem_tombs = sv
            .mem
            .has_range_tombstones()
            .then(|| FragmentedTombstones::new(sv.mem.range_tombstones()));
        let mut pending: Vec<Pending<'_>> = Vec::with_capacity(keys.len());
        'keys: for pos in order {
            let key = keys[pos].as_ref();
            let mut max_tomb = mem_tombs.as_ref().map_or(0, |t| t.max_covering_seq(key, read_seq));
            let found = sv.mem.get(key, read_seq);
            perf::memtable_get(found.is_some());
            if let Some((kind, seq, v)) = found {
                answers[pos] = Some(Ok(visible(kind, seq, max_tomb, v)));
                continue;
            }
            for (imm, tombs) in &sv.imms {
                max_tomb = max_tomb.max(tombs.max_covering_seq(key, read_seq));
                let found = imm.get(key, read_seq);
                perf::memtable_get(found.is_some());
                if let Some((kind, seq, v)) = found {
                    answers[pos] = Some(Ok(visible(kind, seq, max_tomb, v)));
                    continue 'keys;
                }
            }
            pending.push(Pending { pos, key, hash: filter_hash(key), max_tomb });
        }

        // L0, newest file first: every pending key in the file's range.
        for f in sv.version.level_files(0) {
            if pending.is_empty() {
                break;
            }
            let (batch, rest): (Vec<_>, Vec<_>) = pending
                .into_iter()
                .partition(|p| f.smallest.user_key() <= p.key && p.key <= f.largest.user_key());
            pending = rest;
            let left = self.probe_file(f, 0, batch, read_seq, fill_cache, &mut answers);
            pending.extend(left);
            pending.sort_by(|a, b| a.key.cmp(b.key));
        }
        // Deeper levels: at most one file per key; sorted keys meet the files in order.
        for level in 1..sv.version.num_levels() {
            if pending.is_empty() {
                break;
            }
            let files = sv.version.level_files(level);
            let mut next = Vec::with_capacity(pending.len());
            let mut batch: Vec<Pending<'_>> = Vec::new();
            let mut batch_file: Option<usize> = None;
            for p in pending {
                let i = files.partition_point(|file| {
                    let l = file.largest.user_key();
                    l < p.key || (l == p.key && file.largest_is_sentinel())
                });
                let in_file = files.get(i).is_some_and(|file| file.smallest.user_key() <= p.key);
                if !in_file {
                    next.push(p);
                    continue;
                }
                if batch_file != Some(i) {
                    if let Some(b) = batch_file.and_then(|b| files.get(b)) {
                        let batch = std::mem::take(&mut batch);
                        next.extend(self.probe_file(
                            b,
                            level,
                            batch,
                            read_seq,
                            fill_cache,
                            &mut answers,
                        ));
                    }
                    batch_file = Some(i);
                }
                batch.push(p);
            }
            if let Some(b) = batch_file.and_then(|b| files.get(b)) {
                next.extend(self.probe_file(b, level, batch, read_seq, fill_cache, &mut answers));
            }
            next.sort_by(|a, b| a.key.cmp(b.key));
            pending = next;
        }
        answers.into_iter().map(|a| a.unwrap_or(Ok(None))).collect()
    }

    /// Looks the sorted `batch` up in file `f` of `level`; answers the keys it settles (found,
    /// or an error) and returns the others.
    fn probe_file<'k>(
        &self,
        f: &FileMetaData,
        level: usize,
        mut batch: Vec<Pending<'k>>,
        read_seq: SequenceNumber,
        fill_cache: bool,
        answers: &mut [Option<Answer>],
    ) -> Vec<Pending<'k>> {
        if batch.is_empty() {
            return batch;
        }
        let reader = match self.table_cache.get_at(f.number, Some(level)) {
            Ok(r) => r,
            Err(e) => {
                settle_all_with_error(&batch, e, answers);
                return Vec::new();
            }
        };
        let tombs = reader.range_tombstones();
        for p in &mut batch {
            p.max_tomb = p.max_tomb.max(tombs.max_covering_seq(p.key, read_seq));
        }
        let mut mk: Vec<MultiGetKey<'_>> = batch
            .iter()
            .map(|p| MultiGetKey { user_key: p.key, hash: p.hash, found: None })
            .collect();
        if let Err(e) = reader.multi_get(&mut mk, read_seq, fill_cache) {
            settle_all_with_error(&batch, e, answers);
            return Vec::new();
        }
        let mut left = Vec::with_capacity(batch.len());
        for (p, k) in batch.into_iter().zip(mk) {
            match k.found {
                Some((kind, seq, v)) => {
                    if let Some(a) = answers.get_mut(p.pos) {
                        *a = Some(Ok(is_live(kind, seq, p.max_tomb).then_some(v)));
                    }
                }
                None => left.push(p),
            }
        }
        left
    }
}

/// Every key of `batch` gets (a copy of) the error of its file.
fn settle_all_with_error(batch: &[Pending<'_>], e: Error, answers: &mut [Option<Answer>]) {
    let mut e = Some(e);
    for (n, p) in batch.iter().enumerate() {
        let this = if n + 1 == batch.len() { e.take() } else { e.as_ref().map(copy_error) };
        if let (Some(a), Some(this)) = (answers.get_mut(p.pos), this) {
            *a = Some(Err(this));
        }
    }
}

/// The same error for another key (`Error` is not `Clone`: its IO source is not).
fn copy_error(e: &Error) -> Error {
    match e {
        Error::Io { context, source } => {
            Error::io(context.clone(), std::io::Error::new(source.kind(), source.to_string()))
        }
        Error::Corruption { file, offset, detail } => {
            Error::corruption(file, *offset, detail.clone())
        }
        Error::InvalidArgument(s) => Error::InvalidArgument(s.clone()),
        Error::Locked(s) => Error::Locked(s.clone()),
        Error::NotFound(s) => Error::NotFound(s.clone()),
        Error::BackgroundError(s) => Error::BackgroundError(s.clone()),
        Error::Busy(s) => Error::Busy(s.clone()),
    }
}
