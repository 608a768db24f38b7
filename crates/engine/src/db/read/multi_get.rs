//! Batched MultiGet over one [`SuperVersion`]: the keys are sorted once, looked up in the
//! memtables one by one, then handed to each table file as one sorted batch
//! ([`TableReader::multi_get`](crate::sst::TableReader::multi_get): one filter fetch, one
//! index cursor, the needed data blocks fetched together). Answers are those of
//! [`DbInner::get_in`] per key, at one read sequence (snapshot-consistent), in caller order.
//!
//! Who calls: `Db::multi_get`. Locks: none (the block cache's shard locks inside readers).

use crate::db::core::{DbInner, SuperVersion};
use crate::error::{Error, Result};
use crate::key::{SequenceNumber, ValueKind};
use crate::perf;
use crate::sst::filter::filter_hash;
use crate::sst::reader::MultiGetKey;
use crate::version::FileMetaData;

use super::{is_live, is_merge, visible};

/// A key looking for its newest entry.
struct Pending<'k> {
    /// Position in the caller's slice.
    pos: usize,
    key: &'k [u8],
    hash: u64,
    /// Highest sequence of a range tombstone covering the key met so far.
    max_tomb: SequenceNumber,
    /// Answered (found, or its file failed).
    done: bool,
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
        // Equal keys get equal answers, so an unstable sort is enough.
        order.sort_unstable_by(|&a, &b| keys[a].as_ref().cmp(keys[b].as_ref()));

        let mem_tombs = sv.mem.fragmented_range_tombstones();
        // Sorted by key; stays in this order (answered keys are marked `done`).
        let mut pending: Vec<Pending<'_>> = Vec::with_capacity(keys.len());
        'keys: for pos in order {
            let key = keys[pos].as_ref();
            let mut max_tomb = mem_tombs.as_ref().map_or(0, |t| t.max_covering_seq(key, read_seq));
            let found = sv.mem.get(key, read_seq);
            perf::memtable_get(found.is_some());
            if let Some((kind, seq, v)) = found {
                answers[pos] = Some(if is_merge(kind, seq, max_tomb) {
                    self.get_merged(sv, key, read_seq, fill_cache)
                } else {
                    Ok(visible(kind, seq, max_tomb, v))
                });
                continue;
            }
            for (imm, tombs) in &sv.imms {
                max_tomb = max_tomb.max(tombs.max_covering_seq(key, read_seq));
                let found = imm.get(key, read_seq);
                perf::memtable_get(found.is_some());
                if let Some((kind, seq, v)) = found {
                    answers[pos] = Some(if is_merge(kind, seq, max_tomb) {
                        self.get_merged(sv, key, read_seq, fill_cache)
                    } else {
                        Ok(visible(kind, seq, max_tomb, v))
                    });
                    continue 'keys;
                }
            }
            pending.push(Pending { pos, key, hash: filter_hash(key), max_tomb, done: false });
        }

        let mut left = pending.len();
        let mut batch: Vec<usize> = Vec::with_capacity(pending.len());
        // L0, newest file first: every pending key in the file's range.
        for f in sv.version.level_files(0) {
            if left == 0 {
                break;
            }
            batch.clear();
            batch.extend((0..pending.len()).filter(|&i| {
                let p = &pending[i];
                !p.done && f.smallest.user_key() <= p.key && p.key <= f.largest.user_key()
            }));
            left -=
                self.probe_file(sv, f, 0, &mut pending, &batch, read_seq, fill_cache, &mut answers);
        }
        // Deeper levels: at most one file per key; sorted keys meet the files in order.
        for level in 1..sv.version.num_levels() {
            if left == 0 {
                break;
            }
            let files = sv.version.level_files(level);
            let mut batch_file: Option<usize> = None;
            let mut from = 0;
            batch.clear();
            for i in 0..pending.len() {
                let p = &pending[i];
                if p.done {
                    continue;
                }
                let fi = from
                    + files.get(from..).unwrap_or(&[]).partition_point(|file| {
                        let l = file.largest.user_key();
                        l < p.key || (l == p.key && file.largest_is_sentinel())
                    });
                from = fi;
                if files.get(fi).is_none_or(|file| file.smallest.user_key() > p.key) {
                    continue;
                }
                if batch_file != Some(fi) {
                    if let Some(f) = batch_file.and_then(|b| files.get(b)) {
                        left -= self.probe_file(
                            sv,
                            f,
                            level,
                            &mut pending,
                            &batch,
                            read_seq,
                            fill_cache,
                            &mut answers,
                        );
                    }
                    batch.clear();
                    batch_file = Some(fi);
                }
                batch.push(i);
            }
            if let Some(f) = batch_file.and_then(|b| files.get(b)) {
                left -= self.probe_file(
                    sv,
                    f,
                    level,
                    &mut pending,
                    &batch,
                    read_seq,
                    fill_cache,
                    &mut answers,
                );
            }
        }
        answers.into_iter().map(|a| a.unwrap_or(Ok(None))).collect()
    }

    /// Looks the keys `pending[batch]` (sorted) up in file `f` of `level`, answering and
    /// marking done those it settles (found, or an error). Returns how many it settled.
    #[allow(clippy::too_many_arguments)]
    fn probe_file(
        &self,
        sv: &SuperVersion,
        f: &FileMetaData,
        level: usize,
        pending: &mut [Pending<'_>],
        batch: &[usize],
        read_seq: SequenceNumber,
        fill_cache: bool,
        answers: &mut [Option<Answer>],
    ) -> usize {
        if batch.is_empty() {
            return 0;
        }
        let reader = match self.table_cache.reader(f, Some(level)) {
            Ok(r) => r,
            Err(e) => return settle_all_with_error(pending, batch, e, answers),
        };
        let tombs = reader.range_tombstones();
        let mut mk: Vec<MultiGetKey<'_>> = Vec::with_capacity(batch.len());
        for &i in batch {
            if let Some(p) = pending.get_mut(i) {
                p.max_tomb = p.max_tomb.max(tombs.max_covering_seq(p.key, read_seq));
                mk.push(MultiGetKey { user_key: p.key, hash: p.hash, found: None, error: None });
            }
        }
        if let Err(e) = reader.multi_get(&mut mk, read_seq, fill_cache) {
            return settle_all_with_error(pending, batch, e, answers);
        }
        let mut settled = 0;
        for (&i, k) in batch.iter().zip(mk) {
            let Some(p) = pending.get_mut(i) else { continue };
            let answer = match (k.error, k.found) {
                (Some(e), _) => Err(e),
                (None, Some((kind, seq, _))) if is_merge(kind, seq, p.max_tomb) => {
                    self.get_merged(sv, p.key, read_seq, fill_cache)
                }
                (None, Some((ValueKind::BlobIndex, seq, v))) if seq >= p.max_tomb => {
                    self.blobs.get(p.key, &v).map(Some)
                }
                (None, Some((kind, seq, v))) => Ok(is_live(kind, seq, p.max_tomb).then_some(v)),
                (None, None) => continue,
            };
            p.done = true;
            settled += 1;
            if let Some(a) = answers.get_mut(p.pos) {
                *a = Some(answer);
            }
        }
        settled
    }
}

/// Every key of `pending[batch]` gets (a copy of) the error of its file; returns how many.
fn settle_all_with_error(
    pending: &mut [Pending<'_>],
    batch: &[usize],
    e: Error,
    answers: &mut [Option<Answer>],
) -> usize {
    let mut e = Some(e);
    let mut settled = 0;
    for (n, &i) in batch.iter().enumerate() {
        let this = if n + 1 == batch.len() { e.take() } else { e.as_ref().map(Error::duplicate) };
        if let (Some(p), Some(this)) = (pending.get_mut(i), this) {
            p.done = true;
            settled += 1;
            if let Some(a) = answers.get_mut(p.pos) {
                *a = Some(Err(this));
            }
        }
    }
    settled
}
