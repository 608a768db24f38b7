//! What [`super::DbWithTtl`] puts around the user's merge operator and compaction filter
//! (RocksDB's `TtlMergeOperator` and `TtlCompactionFilter`), and the timestamp suffix they
//! read and write (`docs/format/ttl.md`): every value and merge operand ends in 4 bytes, the
//! Unix time in seconds (an `i32`, little-endian) when it was written.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use crate::compaction_filter::{CompactionFilter, FilterDecision, FilterValueType};
use crate::error::{Error, Result};
use crate::merge::{MergeError, MergeOperator};

/// Bytes of the timestamp suffix.
pub const TS_LEN: usize = 4;

/// The earliest timestamp a read accepts (RocksDB's `kMinTimestamp`, 2013-05-09): a smaller
/// one means the value was not written through a [`super::DbWithTtl`].
pub const MIN_TIMESTAMP: i32 = 1_368_146_402;

/// The current Unix time in seconds, as the TTL layers read it (tests pass a fake one).
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    })
}

/// `value` with the timestamp `now` appended (RocksDB's `AppendTS`: the time truncated to 32
/// bits).
pub fn append_ts(value: &[u8], now: i64) -> Vec<u8> {
    let mut v = Vec::with_capacity(value.len() + TS_LEN);
    v.extend_from_slice(value);
    v.extend_from_slice(&(now as i32).to_le_bytes());
    v
}

/// The timestamp at the end of `value`, if it has one.
fn timestamp(value: &[u8]) -> Option<i32> {
    let at = value.len().checked_sub(TS_LEN)?;
    value.get(at..)?.try_into().ok().map(i32::from_le_bytes)
}

/// `value` without its timestamp, after RocksDB's `SanityCheckTimestamp`: too short or too old
/// a timestamp is corruption (a value not written with a TTL, or damaged).
pub fn strip_checked(value: &[u8]) -> Result<&[u8]> {
    let bad = |why: &str| Error::corruption("<value with a TTL timestamp>", 0, why.to_string());
    let ts = timestamp(value).ok_or_else(|| bad("value's length less than timestamp's"))?;
    if ts < MIN_TIMESTAMP {
        return Err(bad("Timestamp < ttl feature release time!"));
    }
    Ok(&value[..value.len() - TS_LEN])
}

/// True if `value` is older than `ttl` seconds at `now` (RocksDB's `IsStale`; a non-positive
/// `ttl` never expires).
pub fn is_stale(value: &[u8], ttl: i32, now: i64) -> bool {
    ttl > 0 && timestamp(value).is_some_and(|ts| (ts as i64) + (ttl as i64) < now)
}

/// The user's operator under timestamps: they are stripped from the base and the operands
/// before it runs, and the current time is appended to its result.
pub(super) struct TtlMergeOperator {
    pub(super) user: Arc<dyn MergeOperator>,
    pub(super) clock: Clock,
}

/// The operands without their timestamps, or the failure RocksDB reports.
fn strip_all<'a>(operands: &[&'a [u8]]) -> Option<Vec<&'a [u8]>> {
    operands.iter().map(|o| o.len().checked_sub(TS_LEN).map(|n| &o[..n])).collect()
}

impl MergeOperator for TtlMergeOperator {
    fn name(&self) -> &str {
        "TtlMergeOperator"
    }

    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> std::result::Result<Vec<u8>, MergeError> {
        let base = match existing {
            Some(e) => Some(
                e.get(..e.len().wrapping_sub(TS_LEN)).filter(|_| e.len() >= TS_LEN).ok_or_else(
                    || MergeError::new("Could not remove timestamp from existing value."),
                )?,
            ),
            None => None,
        };
        let ops = strip_all(operands)
            .ok_or_else(|| MergeError::new("Could not remove timestamp from operand value."))?;
        let v = self.user.full_merge(key, base, &ops)?;
        Ok(append_ts(&v, (self.clock)()))
    }

    fn partial_merge_multi(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let ops = strip_all(operands)?;
        let v = self.user.partial_merge_multi(key, &ops)?;
        Some(append_ts(&v, (self.clock)()))
    }
}

/// Expires values older than the TTL, then offers the rest (without their timestamps) to the
/// user's filter, if any; merge operands are kept (RocksDB's `TtlCompactionFilter` filters
/// values only).
pub(super) struct TtlCompactionFilter {
    pub(super) ttl: Arc<AtomicI32>,
    pub(super) clock: Clock,
    pub(super) user: Option<Arc<dyn CompactionFilter>>,
}

impl CompactionFilter for TtlCompactionFilter {
    fn name(&self) -> &str {
        "TtlCompactionFilter"
    }

    fn filter(
        &self,
        level: usize,
        key: &[u8],
        value_type: FilterValueType,
        value: &[u8],
    ) -> FilterDecision {
        if value_type != FilterValueType::Value {
            return FilterDecision::Keep;
        }
        if is_stale(value, self.ttl.load(Ordering::Relaxed), (self.clock)()) {
            return FilterDecision::Remove;
        }
        let (Some(user), Some(n)) = (&self.user, value.len().checked_sub(TS_LEN)) else {
            return FilterDecision::Keep;
        };
        match user.filter(level, key, value_type, &value[..n]) {
            FilterDecision::ChangeValue(mut v) => {
                v.extend_from_slice(&value[n..]);
                FilterDecision::ChangeValue(v)
            }
            d => d,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_append_strip_and_expire() {
        let v = append_ts(b"value", 1_700_000_000);
        // docs/format/ttl.md's golden bytes.
        assert_eq!(v, [0x76, 0x61, 0x6c, 0x75, 0x65, 0x00, 0xf1, 0x53, 0x65]);
        assert_eq!(strip_checked(&v).unwrap(), b"value");
        assert!(strip_checked(b"abc").unwrap_err().is_corruption());
        assert!(strip_checked(&append_ts(b"x", 1000)).unwrap_err().is_corruption());
        assert!(!is_stale(&v, 100, 1_700_000_100));
        assert!(is_stale(&v, 100, 1_700_000_101));
        assert!(!is_stale(&v, 0, i64::MAX));
        // ts + ttl in 64 bits: no overflow for a 15-year TTL.
        assert!(!is_stale(&append_ts(b"", i32::MAX as i64), 86400 * 365 * 15, i32::MAX as i64));
    }

    #[test]
    fn the_operator_strips_and_stamps() {
        let clock: Clock = Arc::new(|| 1_800_000_000);
        let op = TtlMergeOperator {
            user: crate::merge::builtin_by_name("stringappend").unwrap(),
            clock,
        };
        let (a, b) = (append_ts(b"a", 1_700_000_000), append_ts(b"b", 1_700_000_001));
        assert_eq!(op.full_merge(b"k", Some(&a), &[&b]).unwrap(), append_ts(b"a,b", 1_800_000_000));
        assert_eq!(
            op.partial_merge_multi(b"k", &[&a, &b]).unwrap(),
            append_ts(b"a,b", 1_800_000_000)
        );
        assert!(op.full_merge(b"k", Some(b"ab"), &[&b]).is_err());
        assert!(op.full_merge(b"k", None, &[b"ab"]).is_err());
    }
}
