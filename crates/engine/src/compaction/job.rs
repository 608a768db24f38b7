//! The merge of a compaction: reads the inputs in internal-key order through a
//! [`CompactionIter`] (which drops what no reader can see, merges operands and applies the
//! compaction filter: `iterator.rs` has the rules) and writes output files of about
//! `Compaction::target_file_size` bytes at the output level.
//!
//! Visibility rules (snapshot stripes): the live snapshots cut the sequence space into stripes;
//! within a stripe only the newest entry of a user key can be read, so older ones are dropped.
//! A range tombstone in the oldest stripe is dropped at the bottommost level, where nothing
//! older lies beneath.
//!
//! Range tombstones are clipped to each output file's key partition `[first key, next file's
//! first key)`, so output files never overlap; a file's largest key may be the sentinel
//! `(end, MAX_SEQUENCE, RangeDelete)`, which sorts before every real entry of `end`.
//!
//! Who calls: `DbInner::run_compaction`, with no lock held. On error, outputs already written
//! are deleted and the error returned; nothing is installed.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::iterator::{CompactionIter, CompactionPolicy};
use super::Compaction;
use crate::blob::format::note_oldest_blob_file;
use crate::blob::gc::{BlobCompaction, BlobJobOutput};
use crate::blob::reader::BlobSource;
use crate::blob::separate::BlobSeparator;
use crate::error::Result;
use crate::filename::{table_name, table_path};
use crate::fs::rate_limiter::{IoPriority, RateLimitedFile, RateLimiter};
use crate::fs::Fs;
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::InternalIterator;
use crate::key::{SequenceNumber, MAX_SEQUENCE};
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
    /// The blob files, when the database has or writes any (`blob::gc`).
    pub blobs: Option<&'a BlobSource>,
    /// Blob indexes into files numbered below this are relocated (0: none).
    pub blob_gc_cutoff: u64,
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
    /// Blob files written and garbage counted.
    pub blobs: BlobJobOutput,
}

struct Output {
    builder: TableBuilder,
    number: u64,
    /// First user key of this file's partition (None: unbounded below).
    lower: Option<Vec<u8>>,
    /// The smallest blob file its blob indexes point into (0: none).
    oldest_blob: u64,
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
            crate::fs::direct::create(
                self.ctx.fs,
                &table_path(self.ctx.dir, number),
                self.ctx.opts.use_direct_io_for_flush_and_compaction,
            )?,
            self.ctx.rate_limiter,
            IoPriority::Low,
        );
        let topts = self.ctx.opts.table_builder_options(self.c.output_level, self.c.bottommost);
        self.cur = Some(Output {
            builder: TableBuilder::new(topts, file, table_name(number)),
            number,
            lower,
            oldest_blob: 0,
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
        let mut meta = FileMetaData::from_table(o.number, &props, &mine);
        meta.oldest_blob_file_number = o.oldest_blob;
        self.out.files.push(meta);
        Ok(())
    }
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
    let (opts, shutting_down) = (ctx.opts, ctx.shutting_down);
    let mut blob_job = None;
    let blob_values = ctx.blobs.map(|b| b as &dyn crate::iter::BlobValues);
    if let Some(source) = ctx.blobs {
        let sep = opts_blob_separator(ctx, c.output_level);
        let (job, wrapped) = BlobCompaction::new(source, sep, ctx.blob_gc_cutoff, input);
        blob_job = Some(job);
        input = wrapped;
    }
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
        input.seek_to_first();
        let policy = CompactionPolicy {
            snapshots: &snapshots,
            tombstones: Some(tombstones),
            bottommost: c.bottommost,
            // Never in L0, whose files are ordered by their largest sequence number.
            zero_seqs: c.bottommost && c.output_level > 0,
            merge: opts.merge_operator.as_deref(),
            filter: opts.compaction_filter.as_deref().map(|f| (f, c.level)),
            blobs: blob_values,
            shutting_down: Some(shutting_down),
        };
        let mut it = CompactionIter::new(input.as_mut(), policy);
        let done = (|| -> Result<()> {
            while let Some((ikey, value, new_user_key)) = it.next()? {
                // Cut the output only between user keys.
                if new_user_key
                    && w.cur.as_ref().is_some_and(|o| o.builder.file_size_estimate() >= target)
                {
                    w.finish(Some(crate::key::user_key(ikey)))?;
                }
                if w.cur.is_none() {
                    w.open()?;
                }
                if let Some(o) = w.cur.as_mut() {
                    match blob_job.as_mut() {
                        Some(b) => b.add(ikey, value, w.ctx.new_file_number, &mut |k, v| {
                            note_oldest_blob_file(&mut o.oldest_blob, k, v);
                            o.builder.add(k, v)
                        })?,
                        None => {
                            note_oldest_blob_file(&mut o.oldest_blob, ikey, value);
                            o.builder.add(ikey, value)?
                        }
                    }
                }
            }
            Ok(())
        })();
        w.out.keys_in = it.keys_in;
        w.out.keys_dropped = it.keys_dropped();
        done?;
        // The blob files are synced before the tables that point into them.
        if let Some(b) = blob_job.take() {
            w.out.blobs = b.finish()?;
            w.out.bytes_written += w.out.blobs.bytes_written;
        }
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
            // Its blob files too: a job cut short (an error, or the database closing) left
            // them on disk until the next sweep of obsolete files, at close often none.
            if let Some(b) = blob_job.take() {
                b.abandon();
            }
            for a in &w.out.blobs.additions {
                let _ = w.ctx.fs.remove_file(&crate::filename::blob_path(w.ctx.dir, a.number));
            }
            Err(e)
        }
    }
}

/// The separator of a job writing at `level`, if blob files are written there.
fn opts_blob_separator<'a>(ctx: &JobContext<'a>, level: usize) -> Option<BlobSeparator<'a>> {
    let policy = crate::blob::separate::SeparationPolicy::for_level(ctx.opts, level)?;
    Some(BlobSeparator::new(ctx.fs, ctx.dir, policy))
}

#[cfg(test)]
mod tests {
    use crate::compaction::iterator::stripe;

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
