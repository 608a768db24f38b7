//! [`TableReader::for_each_entry`]: every entry of one user key in a table, newest first, for
//! a point read that gathers merge operands (`db/read/merge.rs`). The entries of a key may
//! cross data blocks; the index cursor follows them. No locks beyond the block cache's.

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{self, SequenceNumber, ValueKind};
use crate::perf;
use crate::sst::filter::filter_hash;
use crate::sst::index_iter::IndexIter;

use super::TableReader;

impl TableReader {
    /// Calls `f(kind, seq, value)` for each point entry of `user_key` with sequence `<= seq`,
    /// newest first, until `f` returns false or the key's entries end. Checks the bloom filter
    /// first (a table without the key costs no data block).
    pub fn for_each_entry(
        &self,
        user_key: &[u8],
        seq: SequenceNumber,
        fill_cache: bool,
        mut f: impl FnMut(ValueKind, SequenceNumber, &[u8]) -> bool,
    ) -> Result<()> {
        perf::table_get();
        if let Some(may) = self.filter_check(user_key, filter_hash(user_key), fill_cache)? {
            perf::bloom_checked(may);
            if !may {
                return Ok(());
            }
        }
        let target = key::seek_key(user_key, seq.min(key::MAX_SEQUENCE));
        let mut index = IndexIter::new(self, fill_cache);
        index.seek(self, &target);
        let mut first = true;
        while index.valid() {
            let handle = self.decode_handle(index.value(), index.block_offset())?;
            let block = self.data_block(handle, fill_cache)?;
            let mut it = block.iter();
            if first {
                it.seek(&target);
                first = false;
            } else {
                it.seek_to_first();
            }
            while it.valid() {
                let p = key::parse_internal_key(it.key()).ok_or_else(|| {
                    Error::corruption(&self.file_name, handle.offset, "malformed internal key")
                })?;
                if p.user_key != user_key || !f(p.kind, p.seq, it.value()) {
                    return Ok(());
                }
                it.next();
            }
            it.status()?;
            index.next(self);
        }
        index.status()
    }
}
