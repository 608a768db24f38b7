//! The per-thread perf context (RocksDB's `PerfContext`): counters of what this thread's reads
//! did (block cache hits and misses by role, blocks and bytes read from files, bloom probes,
//! memtable lookups, seeks), so a benchmark can report IO per query.
//!
//! Owns: one thread-local array of `Cell<u64>` counters and one process-wide level
//! ([`set_perf_level`]; RocksDB's level is per thread, this one is global so that it reaches
//! the worker threads a benchmark spawns). Called by the read path (`sst::reader`,
//! `db::read`, `sst::table_iter`); read by users with [`perf_context`]. No locks: a counter
//! bump is one relaxed load of the level plus one thread-local add, and nothing when the
//! level is [`PerfLevel::Disable`].
//!
//! The per-database table-file read counters ([`ReadIoStats`], all threads, relaxed atomics)
//! are in `read_io.rs`, re-exported here; they feed the perf context as they count.
//!
//! ```
//! use talus::perf::{self, PerfLevel};
//! perf::set_perf_level(PerfLevel::EnableCount);
//! perf::reset();
//! // ... reads on this thread ...
//! let ctx = perf::perf_context();
//! assert_eq!(ctx.block_read_count, 0);
//! ```

use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

mod read_io;

pub use read_io::{ReadIoSnapshot, ReadIoStats};

/// What a block is for: the block cache's per-role statistics and the perf context count by
/// role, and the high-priority pool of the LRU takes index and filter blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockRole {
    /// A data block (key/value entries).
    Data,
    /// An index block (separator keys to data-block handles).
    Index,
    /// A bloom filter block (raw filter bytes, no entries).
    Filter,
    /// Any other meta block (meta-index, properties, range deletions).
    Other,
}

impl BlockRole {
    /// Every role, in the order used by per-role arrays.
    pub const ALL: [BlockRole; 4] =
        [BlockRole::Data, BlockRole::Index, BlockRole::Filter, BlockRole::Other];

    /// Position of the role in [`BlockRole::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// RocksDB's name of the role in "Block cache entry stats" (`DataBlock`, ...).
    pub fn name(self) -> &'static str {
        match self {
            BlockRole::Data => "DataBlock",
            BlockRole::Index => "IndexBlock",
            BlockRole::Filter => "FilterBlock",
            BlockRole::Other => "Misc",
        }
    }
}

/// How much the perf context records (RocksDB's `PerfLevel` values 1 and 2; the timing
/// levels are not implemented: Talus counts, it does not time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum PerfLevel {
    /// Record nothing (RocksDB's `kDisable`, 1).
    Disable = 1,
    /// Record the counters (RocksDB's `kEnableCount`, 2, its default).
    EnableCount = 2,
}

impl PerfLevel {
    /// RocksDB's numeric level: 0 and 1 disable, 2 and above count (the timing levels 3-5 are
    /// taken as counting).
    pub fn from_rocksdb(level: i64) -> PerfLevel {
        if level >= 2 {
            PerfLevel::EnableCount
        } else {
            PerfLevel::Disable
        }
    }
}

static LEVEL: AtomicU8 = AtomicU8::new(PerfLevel::EnableCount as u8);

/// Sets the process-wide perf level.
pub fn set_perf_level(level: PerfLevel) {
    LEVEL.store(level as u8, Relaxed);
}

/// The process-wide perf level.
pub fn perf_level() -> PerfLevel {
    if LEVEL.load(Relaxed) >= PerfLevel::EnableCount as u8 {
        PerfLevel::EnableCount
    } else {
        PerfLevel::Disable
    }
}

macro_rules! counters {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        /// A copy of this thread's counters ([`perf_context`]). Field names are RocksDB's where it
        /// has the counter.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct PerfContext {
            $($(#[$doc])* pub $name: u64,)*
        }

        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy)]
        #[repr(usize)]
        enum Counter { $($name,)* COUNT }

        impl PerfContext {
            fn from_cells(c: &[Cell<u64>; Counter::COUNT as usize]) -> PerfContext {
                PerfContext { $($name: c[Counter::$name as usize].get(),)* }
            }

            /// `(name, value)` of every counter, in declaration order.
            pub fn fields(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name),)*]
            }
        }
    };
}

counters! {
    /// Block cache hits, all roles.
    block_cache_hit_count,
    /// Block cache hits of data blocks.
    block_cache_data_hit_count,
    /// Block cache hits of index blocks.
    block_cache_index_hit_count,
    /// Block cache hits of filter blocks.
    block_cache_filter_hit_count,
    /// Block cache misses, all roles.
    block_cache_miss_count,
    /// Block cache misses of data blocks.
    block_cache_data_miss_count,
    /// Block cache misses of index blocks.
    block_cache_index_miss_count,
    /// Block cache misses of filter blocks.
    block_cache_filter_miss_count,
    /// Blocks read from files (any role, cache or not).
    block_read_count,
    /// Bytes of those blocks as stored (with trailers).
    block_read_byte,
    /// Data blocks read from files.
    data_block_read_count,
    /// Bytes of those data blocks as stored.
    data_block_read_byte,
    /// Index blocks (whole indexes or partitions) read from files.
    index_block_read_count,
    /// Bytes of those index blocks as stored.
    index_block_read_byte,
    /// Filter blocks (whole filters or partitions) read from files.
    filter_block_read_count,
    /// Bytes of those filter blocks as stored.
    filter_block_read_byte,
    /// Reads issued to table files (one per block read, or one per readahead that served
    /// several blocks): with direct IO each is at least one device read.
    file_read_count,
    /// Bytes asked by those reads.
    file_read_byte,
    /// Bloom filter probes of point lookups.
    bloom_filter_checked,
    /// Probes that proved the key absent (RocksDB's `BLOOM_FILTER_USEFUL`).
    bloom_filter_useful,
    /// Probes that said "maybe" (RocksDB's `bloom_sst_hit_count`).
    bloom_sst_hit_count,
    /// Point lookups that searched a memtable (mutable or immutable).
    get_from_memtable_count,
    /// Point lookups answered by a memtable.
    get_from_memtable_hit_count,
    /// Table files searched by point lookups (after their key range matched).
    get_from_table_count,
    /// Seeks of SST iterators (each child of a merged iterator counts).
    seek_child_seek_count,
    /// Keys asked by MultiGet.
    multiget_key_count,
}

const N: usize = Counter::COUNT as usize;

thread_local! {
    static CELLS: [Cell<u64>; N] = const { [const { Cell::new(0) }; N] };
}

#[inline]
fn add(c: Counter, n: u64) {
    if LEVEL.load(Relaxed) >= PerfLevel::EnableCount as u8 {
        CELLS.with(|cells| {
            let cell = &cells[c as usize];
            cell.set(cell.get().wrapping_add(n));
        });
    }
}

/// A copy of this thread's counters.
pub fn perf_context() -> PerfContext {
    CELLS.with(PerfContext::from_cells)
}

/// Zeroes this thread's counters.
pub fn reset() {
    CELLS.with(|cells| cells.iter().for_each(|c| c.set(0)));
}

impl PerfContext {
    /// Counter-wise `self - earlier` (saturating), for the work between two snapshots.
    pub fn delta(&self, earlier: &PerfContext) -> PerfContext {
        let mut out = *self;
        let e = earlier.fields();
        let mut i = 0;
        out.map_fields(|v| {
            let d = v.saturating_sub(e.get(i).map_or(0, |f| f.1));
            i += 1;
            d
        });
        out
    }

    /// Counter-wise sum (to aggregate the contexts of several threads).
    pub fn add(&mut self, other: &PerfContext) {
        let o = other.fields();
        let mut i = 0;
        self.map_fields(|v| {
            let s = v.wrapping_add(o.get(i).map_or(0, |f| f.1));
            i += 1;
            s
        });
    }

    fn map_fields(&mut self, mut f: impl FnMut(u64) -> u64) {
        let mut cells: [Cell<u64>; N] = [const { Cell::new(0) }; N];
        for (cell, (_, v)) in cells.iter_mut().zip(self.fields()) {
            *cell.get_mut() = f(v);
        }
        *self = PerfContext::from_cells(&cells);
    }
}

impl fmt::Display for PerfContext {
    /// RocksDB's `PerfContext::ToString(exclude_zero_counters = true)`: `name = value, ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (name, v) in self.fields() {
            if v == 0 {
                continue;
            }
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            write!(f, "{name} = {v}")?;
        }
        Ok(())
    }
}

/// Records a block cache hit of a block with `role`.
#[inline]
pub(crate) fn cache_hit(role: BlockRole) {
    use crate::statistics::{add as tick, Ticker};
    add(Counter::block_cache_hit_count, 1);
    tick(Ticker::BlockCacheHit, 1);
    match role {
        BlockRole::Data => {
            add(Counter::block_cache_data_hit_count, 1);
            tick(Ticker::DataHit, 1);
        }
        BlockRole::Index => {
            add(Counter::block_cache_index_hit_count, 1);
            tick(Ticker::IndexHit, 1);
        }
        BlockRole::Filter => {
            add(Counter::block_cache_filter_hit_count, 1);
            tick(Ticker::FilterHit, 1);
        }
        BlockRole::Other => {}
    }
}

/// Records a block cache miss of a block with `role`.
#[inline]
pub(crate) fn cache_miss(role: BlockRole) {
    use crate::statistics::{add as tick, Ticker};
    add(Counter::block_cache_miss_count, 1);
    tick(Ticker::BlockCacheMiss, 1);
    match role {
        BlockRole::Data => {
            add(Counter::block_cache_data_miss_count, 1);
            tick(Ticker::DataMiss, 1);
        }
        BlockRole::Index => {
            add(Counter::block_cache_index_miss_count, 1);
            tick(Ticker::IndexMiss, 1);
        }
        BlockRole::Filter => {
            add(Counter::block_cache_filter_miss_count, 1);
            tick(Ticker::FilterMiss, 1);
        }
        BlockRole::Other => {}
    }
}

/// Records a block of `role` and `bytes` (as stored) obtained from a file (by its own read or
/// from a readahead buffer).
#[inline]
pub(crate) fn block_read(role: BlockRole, bytes: u64) {
    add(Counter::block_read_count, 1);
    add(Counter::block_read_byte, bytes);
    match role {
        BlockRole::Data => {
            add(Counter::data_block_read_count, 1);
            add(Counter::data_block_read_byte, bytes);
        }
        BlockRole::Index => {
            add(Counter::index_block_read_count, 1);
            add(Counter::index_block_read_byte, bytes);
        }
        BlockRole::Filter => {
            add(Counter::filter_block_read_count, 1);
            add(Counter::filter_block_read_byte, bytes);
        }
        BlockRole::Other => {}
    }
}

/// Records one read of `bytes` issued to a table file.
#[inline]
pub(crate) fn file_read(bytes: u64) {
    add(Counter::file_read_count, 1);
    add(Counter::file_read_byte, bytes);
}

/// Records one bloom filter probe and its answer.
#[inline]
pub(crate) fn bloom_checked(may_contain: bool) {
    add(Counter::bloom_filter_checked, 1);
    if may_contain {
        add(Counter::bloom_sst_hit_count, 1);
    } else {
        add(Counter::bloom_filter_useful, 1);
        crate::statistics::add(crate::statistics::Ticker::BloomUseful, 1);
    }
}

/// Records a point lookup in a memtable, and whether it found the key.
#[inline]
pub(crate) fn memtable_get(hit: bool) {
    add(Counter::get_from_memtable_count, 1);
    if hit {
        add(Counter::get_from_memtable_hit_count, 1);
    }
}

/// Records a point lookup searching one table file.
#[inline]
pub(crate) fn table_get() {
    add(Counter::get_from_table_count, 1);
}

/// Records a seek of an SST iterator.
#[inline]
pub(crate) fn child_seek() {
    add(Counter::seek_child_seek_count, 1);
}

/// Records `n` keys asked by a MultiGet.
#[inline]
pub(crate) fn multiget_keys(n: u64) {
    add(Counter::multiget_key_count, n);
}

#[cfg(test)]
mod tests;
