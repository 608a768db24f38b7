//! The WALs before the active one that are still alive (hold writes some family has not
//! flushed), and their bytes: what `max_total_wal_size` bounds when column families switch
//! their memtables one at a time (`atomic_flush` off; RocksDB's `alive_log_files_` and
//! `total_log_size_`, less the active WAL).
//!
//! Owned by `DbState` (under the state lock). The memtable switch (`write.rs`) adds the WAL it
//! retires; [`AliveWals::prune`] drops the ones below the oldest WAL any family still needs,
//! called by the switch and by the write path's check before it compares the total with the
//! limit ([`wal_limit`]).

use std::collections::VecDeque;

use super::cf_data::CfState;
use crate::options::Options;

/// Retired WALs, oldest first: (number, bytes written to it).
#[derive(Default)]
pub(crate) struct AliveWals {
    wals: VecDeque<(u64, u64)>,
    bytes: u64,
}

impl AliveWals {
    /// Records WAL `number`, retired by a switch after `bytes` were written to it.
    pub fn push(&mut self, number: u64, bytes: u64) {
        self.wals.push_back((number, bytes));
        self.bytes += bytes;
    }

    /// Forgets the WALs below `min_log` (no family needs them: they are obsolete).
    pub fn prune(&mut self, min_log: u64) {
        while let Some(&(n, b)) = self.wals.front() {
            if n >= min_log {
                break;
            }
            self.wals.pop_front();
            self.bytes -= b;
        }
    }

    /// Bytes of the retired WALs still alive (as of the last prune).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The `max_total_wal_size` in force for `families`: the option, or when 0 RocksDB's default,
/// four times the sum over the families of `write_buffer_size * max_write_buffer_number`.
pub(crate) fn wal_limit<'a>(opts: &Options, families: impl Iterator<Item = &'a CfState>) -> u64 {
    if opts.max_total_wal_size > 0 {
        return opts.max_total_wal_size;
    }
    let buffers: u64 = families
        .map(|c| {
            (c.data.opts.write_buffer_size as u64) * (c.data.opts.max_write_buffer_number as u64)
        })
        .sum();
    buffers.saturating_mul(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prune_drops_only_wals_below_the_oldest_needed() {
        let mut a = AliveWals::default();
        a.push(5, 100);
        a.push(7, 50);
        a.push(9, 25);
        assert_eq!(a.bytes(), 175);
        a.prune(7);
        assert_eq!(a.bytes(), 75);
        a.prune(7);
        assert_eq!(a.bytes(), 75);
        a.prune(100);
        assert_eq!(a.bytes(), 0);
        assert!(a.wals.is_empty());
    }

    #[test]
    fn the_limit_is_the_option_or_four_times_the_buffers() {
        let o = Options { max_total_wal_size: 1234, ..Default::default() };
        assert_eq!(wal_limit(&o, std::iter::empty()), 1234);
        let o = Options::default();
        assert_eq!(wal_limit(&o, std::iter::empty()), 0);
    }
}
