//! The blob files a flush writes: a [`BlobSeparator`] whose file numbers are pending outputs
//! (kept from obsolete-file deletion until the MANIFEST lists the files or the job is over).
//!
//! Who calls: `flush.rs` (`write_level0_table`). Locks: `versions` then `state`, one after the
//! other, for each new blob file's number (`reserve_output`). A file written by a job that
//! fails, or by one a crash interrupts before its MANIFEST edit, is in no version: obsolete-file
//! deletion removes it once its guard is gone (at open, after a crash).

use super::core::DbInner;
use super::jobs::OutputGuard;
use crate::blob::separate::BlobSeparator;
use crate::error::Result;
use crate::version::blob_meta::BlobFileAddition;

/// The blob files of one job and the guards that keep them.
#[derive(Default)]
pub(crate) struct BlobOutputs<'a> {
    /// The finished files' MANIFEST records.
    pub additions: Vec<BlobFileAddition>,
    /// Their numbers' pending-output marks.
    pub guards: Vec<OutputGuard<'a>>,
    /// Bytes written to blob files.
    pub bytes: u64,
}

impl DbInner {
    /// A separator for an output at `level`, or `None` when values stay inline there.
    pub(crate) fn blob_separator(&self, level: usize) -> Option<BlobSeparator<'_>> {
        let policy = self.opts.blob_separation(level)?;
        Some(BlobSeparator::new(self.fs.as_ref(), &self.path, policy))
    }

    /// Writes `ikey`/`value` to `add`, through `sep` when it separates the value.
    pub(crate) fn add_maybe_separated<'a>(
        &'a self,
        sep: &mut Option<BlobSeparator<'_>>,
        outputs: &mut BlobOutputs<'a>,
        ikey: &[u8],
        value: &[u8],
        add: &mut dyn FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        if let Some(s) = sep {
            let mut new_number = || {
                let g = self.reserve_output();
                let n = g.number();
                outputs.guards.push(g);
                n
            };
            if s.separate(ikey, value, &mut new_number)? {
                return add(s.key(), s.value());
            }
        }
        add(ikey, value)
    }

    /// Finishes `sep`'s last file; its records go to `outputs`.
    pub(crate) fn finish_blobs(
        &self,
        sep: Option<BlobSeparator<'_>>,
        outputs: &mut BlobOutputs<'_>,
    ) -> Result<()> {
        if let Some(s) = sep {
            outputs.bytes += s.bytes_written();
            outputs.additions.extend(s.finish()?);
        }
        Ok(())
    }
}
