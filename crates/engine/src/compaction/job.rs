//! The merge of a compaction: reads the inputs in internal-key order, drops what no reader can
//! see, and writes output files of about `Compaction::target_file_size` bytes at the output level.
//!
//! Visibility rules (snapshot stripes): the live snapshots cut the sequence space into stripes;
//! within a stripe only the newest entry of a user key can be read, so older ones are dropped.
//! An entry covered by a range tombstone of the same stripe is dropped. A point tombstone, and a
//! range tombstone, in the oldest stripe is dropped at the bottommost level, where nothing older
//! lies beneath.
//!
//! Range tombstones are clipped to each output file's key partition `[first key, next file's
//! first key)`, so output files never overlap; a file's largest key may be the sentinel
//! `(end, MAX_SEQUENCE, RangeDelete)`, which sorts before every real entry of `end`.
//!
//! Who calls: `DbInner::run_compaction`, with no lock held. On error, outputs already written
//! are deleted and the error returned; nothing is installed.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::Compaction;
use crate::db::flush::{file_meta, table_options};
use crate::error::{Error, Result};
use crate::filename::{table_name, table_path};
use crate::fs::rate_limiter::{IoPriority, RateLimitedFile, RateLimiter};
use crate::fs::Fs;
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::InternalIterator;
use crate::key::{
    append_internal_key, parse_internal_key, SequenceNumber, ValueKind, MAX_SEQUENCE,
};
use crate::options::Options;
use crate::sst::TableBuilder;
use crate::version::FileMetaData;

/// What a job needs from the database.
pub struct JobContext<'a> {
    /// Options.
    pub opts: &'a Options,
    /// File system.
    pub fs: &'a dyn Fs,
    /// Database directory.
    pub dir: &'a Path,
    /// Live snapshot sequence numbers, ascending.
    pub snapshots: Vec<SequenceNumber>,
    /// Allocates (and registers as pending) an output file number.
    pub new_file_number: &'a mut dyn FnMut() -> u64,
    /// Set when the database is closing: the job stops early with `Error::Busy`.
    pub shutting_down: &'a AtomicBool,
    /// Charges the output writes, if set.
    pub rate_limiter: Option<&'a Arc<RateLimiter>>,
}

/// What a job produced.
#[derive(Debug, Default)]
pub struct JobOutput {
    /// New files at the output level.
    pub files: Vec<FileMetaData>,
    /// Entries read.
    pub keys_in: u64,
    /// Entries dropped.
    pub keys_dropped: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

struct Output {
    builder: TableBuilder,
    number: u64,
    /// First user key of this file's partition (None: unbounded below).
    lower: Option<Vec<u8>>,
}

struct Writer<'a, 'b> {
    ctx: &'a mut JobContext<'b>,
    c: &'a Compaction,
    tombstones: Vec<RangeTombstone>,
    cur: Option<Output>,
    out: JobOutput,
    created: Vec<u64>,
    /// Partition start of the next output: the previous output's exclusive upper bound.
    next_lower: Option<Vec<u8>>,
}

impl Writer<'_, '_> {
    fn open(&mut self) -> Result<()> {
        let lower = self.next_lower.take();
        let number = (self.ctx.new_file_number)();
        self.created.push(number);
        let file = RateLimitedFile::wrap(
            self.ctx.fs.create(&table_path(self.ctx.dir, number))?,
            self.ctx.rate_limiter,
            IoPriority::Low,
        );
        let topts = table_options(self.ctx.opts, self.c.output_level, self.c.bottommost);
        self.cur = Some(Output {
            builder: TableBuilder::new(topts, file, table_name(number)),
            number,
            lower,
        });
        Ok(())
    }

    /// Finishes the open file, giving it the tombstones of `[lower, upper)`.
    fn finish(&mut self, upper: Option<&[u8]>) -> Result<()> {
        let Some(mut o) = self.cur.take() else { return Ok(()) };
        self.next_lower = upper.map(|u| u.to_vec());
        let mut mine = Vec::new();
        for t in &self.tombstones {
            let start = match &o.lower {
                Some(l) if l.as_slice() > t.start.as_slice() => l.clone(),
                _ => t.start.clone(),
            };
            let end = match upper {
                Some(u) if u < t.end.as_slice() => u.to_vec(),
                _ => t.end.clone(),
            };
            if start < end {
                mine.push(RangeTombstone { start, end, seq: t.seq });
            }
        }
        for t in &mine {
            o.builder.add_range_tombstone(t)?;
        }
        if o.builder.num_entries() == 0 && mine.is_empty() {
            drop(o.builder);
            let _ = self.ctx.fs.remove_file(&table_path(self.ctx.dir, o.number));
            return Ok(());
        }
        let props = o.builder.finish()?;
        self.out.bytes_written += props.file_size;
        self.out.files.push(file_meta(o.number, &props, &mine));
        Ok(())
    }
}

/// The snapshot stripe of `seq`: how many live snapshots (ascending) lie below it. Two versions
/// of a key in the same stripe are read by the same snapshots, so only the newer is needed.
pub(crate) fn stripe(snapshots: &[SequenceNumber], seq: SequenceNumber) -> usize {
    snapshots.partition_point(|&s| s < seq)
}

/// Runs the merge of `c` over `input` (all input files merged) with the inputs' range
/// tombstones `tombstones`.
pub fn run(
    c: &Compaction,
    mut input: Box<dyn InternalIterator>,
    tombstones: &FragmentedTombstones,
    ctx: &mut JobContext<'_>,
) -> Result<JobOutput> {
    let snapshots = ctx.snapshots.clone();
    let earliest_stripe_bound = snapshots.first().copied().unwrap_or(MAX_SEQUENCE);
    // Range tombstones to keep: all but those of the oldest stripe at the bottommost level.
    let kept: Vec<RangeTombstone> = tombstones
        .to_tombstones()
        .into_iter()
        .filter(|t| !(c.bottommost && t.seq <= earliest_stripe_bound))
        .collect();
    let target = c.target_file_size;
    let mut w = Writer {
        ctx,
        c,
        tombstones: kept,
        cur: None,
        out: JobOutput::default(),
        created: Vec::new(),
        next_lower: None,
    };
    let result = (|| -> Result<()> {
        let mut cur_key: Vec<u8> = Vec::new();
        let mut has_cur = false;
        let mut last_stripe = usize::MAX;
        // Never in L0, whose files are ordered by their largest sequence number.
        let zero_seqs = c.bottommost && c.output_level > 0;
        let mut zeroed: Vec<u8> = Vec::new();
        input.seek_to_first();
        while input.valid() {
            if w.ctx.shutting_down.load(Ordering::Relaxed) {
                return Err(Error::Busy("compaction stopped: the database is closing".into()));
            }
            let ikey = input.key();
            let Some(p) = parse_internal_key(ikey) else {
                return Err(Error::corruption("compaction input", 0, "unparsable internal key"));
            };
            w.out.keys_in += 1;
            let new_key = !has_cur || p.user_key != cur_key.as_slice();
            if new_key {
                // Cut the output only between user keys.
                let full = w.cur.as_ref().is_some_and(|o| o.builder.file_size_estimate() >= target);
                if full {
                    w.finish(Some(p.user_key))?;
                }
                cur_key.clear();
                cur_key.extend_from_slice(p.user_key);
                has_cur = true;
                last_stripe = usize::MAX;
            }
            let s = stripe(&snapshots, p.seq);
            let mut drop = s == last_stripe;
            last_stripe = s;
            if !drop {
                let bound = snapshots.get(s).copied().unwrap_or(MAX_SEQUENCE);
                let t = tombstones.max_covering_seq(p.user_key, bound);
                if t > p.seq && stripe(&snapshots, t) == s {
                    drop = true;
                }
            }
            if !drop && p.kind == ValueKind::Delete && c.bottommost && s == 0 {
                drop = true;
            }
            if drop {
                w.out.keys_dropped += 1;
            } else {
                if w.cur.is_none() {
                    w.open()?;
                }
                // At the bottom, the newest version below every snapshot gets sequence 0 (as
                // RocksDB does): nothing older can exist beneath it, and an all-zero trailer
                // compresses far better.
                let out_key = if zero_seqs && s == 0 && p.kind == ValueKind::Put && p.seq != 0 {
                    zeroed.clear();
                    append_internal_key(&mut zeroed, p.user_key, 0, ValueKind::Put);
                    zeroed.as_slice()
                } else {
                    ikey
                };
                if let Some(o) = w.cur.as_mut() {
                    o.builder.add(out_key, input.value())?;
                }
            }
            input.next();
        }
        input.status()?;
        if w.cur.is_none() && !w.tombstones.is_empty() {
            w.open()?;
        }
        w.finish(None)
    })();
    match result {
        Ok(()) => Ok(w.out),
        Err(e) => {
            drop(w.cur.take());
            for n in &w.created {
                let _ = w.ctx.fs.remove_file(&table_path(w.ctx.dir, *n));
            }
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::stripe;

    #[test]
    fn stripes() {
        let snaps = [10, 20];
        assert_eq!(stripe(&snaps, 5), 0);
        assert_eq!(stripe(&snaps, 10), 0);
        assert_eq!(stripe(&snaps, 11), 1);
        assert_eq!(stripe(&snaps, 25), 2);
        assert_eq!(stripe(&[], 25), 0);
    }
}
