//! The key layout of one node's database (docs/format/raft.md, "Keys"): four disjoint ranges
//! by first byte, so the log, the log's metadata, the state machine's metadata and the user's
//! keys never mix and each can be scanned or deleted as one range.
//!
//! | range | keys | what |
//! |---|---|---|
//! | `0x00` | `0x00` + name | the log store's metadata: identity, vote, committed, purged, snapshot |
//! | `0x01` | `0x01` + index (u64 big-endian) | log entries, in index order |
//! | `0x02` | `0x02` + name | the state machine's metadata: last applied, membership |
//! | `0x03` | `0x03` + user key | the state machine's data |
//!
//! A snapshot holds the ranges `0x02` and `0x03` ([`SM_START`]..[`SM_END`]); installing one
//! deletes exactly that range and ingests the snapshot's file.

/// The node id this data directory belongs to ([`crate::codec::encode_node_id`]).
pub const NODE_ID: &[u8] = b"\x00node_id";
/// The last saved vote.
pub const VOTE: &[u8] = b"\x00vote";
/// The last saved committed log id.
pub const COMMITTED: &[u8] = b"\x00committed";
/// The last purged log id.
pub const PURGED: &[u8] = b"\x00purged";
/// The current snapshot's metadata (its file: `snapshots/<id>.snap`).
pub const SNAPSHOT: &[u8] = b"\x00snapshot";
/// The metadata of a snapshot whose installation has begun and not finished: open redoes it.
pub const INSTALLING: &[u8] = b"\x00installing";

/// The first byte of log entry keys.
pub const LOG_PREFIX: u8 = 0x01;
/// The first log key (index 0).
pub const LOG_START: &[u8] = b"\x01";
/// The end (exclusive) of the log range.
pub const LOG_END: &[u8] = b"\x02";

/// The state machine's last applied log id.
pub const APPLIED: &[u8] = b"\x02applied";
/// The state machine's last applied membership.
pub const MEMBERSHIP: &[u8] = b"\x02membership";
/// The first byte of user keys.
pub const DATA_PREFIX: u8 = 0x03;

/// The start of the state machine's range (its metadata, then its data).
pub const SM_START: &[u8] = b"\x02";
/// The end (exclusive) of the state machine's range.
pub const SM_END: &[u8] = b"\x04";

/// The key of log entry `index`: `0x01` then the index big-endian (so keys sort by index).
pub fn log_key(index: u64) -> [u8; 9] {
    let mut k = [0u8; 9];
    k[0] = LOG_PREFIX;
    k[1..].copy_from_slice(&index.to_be_bytes());
    k
}

/// The index of a log key, or `None` if `key` is not one.
pub fn log_index(key: &[u8]) -> Option<u64> {
    match key {
        [LOG_PREFIX, rest @ ..] => Some(u64::from_be_bytes(rest.try_into().ok()?)),
        _ => None,
    }
}

/// The database key of user key `key`: `0x03` then the key's bytes.
pub fn data_key(key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + 1);
    k.push(DATA_PREFIX);
    k.extend_from_slice(key);
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_keys_sort_by_index_and_round_trip() {
        let idx = [0u64, 1, 255, 256, 65_535, 1 << 40, u64::MAX];
        for w in idx.windows(2) {
            assert!(log_key(w[0]) < log_key(w[1]), "{} < {}", w[0], w[1]);
        }
        for i in idx {
            assert_eq!(log_index(&log_key(i)), Some(i));
            assert!(&log_key(i)[..] >= LOG_START && &log_key(i)[..] < LOG_END);
        }
        assert_eq!(log_key(258), *b"\x01\x00\x00\x00\x00\x00\x00\x01\x02");
        assert_eq!(log_index(b"\x01\x00"), None);
        assert_eq!(log_index(VOTE), None);
    }

    #[test]
    fn ranges_are_disjoint_and_ordered() {
        for k in [NODE_ID, VOTE, COMMITTED, PURGED, SNAPSHOT, INSTALLING] {
            assert!(k < LOG_START, "{k:?}");
        }
        for k in [APPLIED, MEMBERSHIP] {
            assert!(k >= SM_START && k < &[DATA_PREFIX][..], "{k:?}");
        }
        assert!(data_key(b"") >= SM_START.to_vec() && data_key(&[0xff; 8]) < SM_END.to_vec());
        assert_eq!(data_key(b"k"), b"\x03k");
    }
}
