//! The byte encoding of every record talus-raft stores: log entries, the vote, log ids, the
//! membership, snapshot metadata and the node identity (docs/format/raft.md, version 1, byte
//! for byte; golden bytes in `codec_tests.rs`).
//!
//! Integers are little-endian and fixed-width; strings and byte strings are a `u32` length then
//! the bytes. Every record starts with the format version byte [`VERSION`]. Decoding is strict:
//! a wrong version, a short or over-long record, an unknown tag or a string that is not UTF-8 is
//! [`talus::Error::Corruption`] naming the record and the offset, never a panic. The bytes are
//! checksummed by the engine that stores them (WAL records, SST blocks), not here.

use std::collections::{BTreeMap, BTreeSet};

use talus::Error;

use crate::types::{
    Entry, LogId, Membership, Node, NodeId, Request, SnapshotMeta, StoredMembership, Vote,
};

/// The format version byte that starts every record.
pub const VERSION: u8 = 1;

const PAYLOAD_BLANK: u8 = 0;
const PAYLOAD_NORMAL: u8 = 1;
const PAYLOAD_MEMBERSHIP: u8 = 2;
const OP_PUT: u8 = 1;
const OP_DELETE: u8 = 2;

/// Appends little-endian integers, length-prefixed strings and openraft values to a buffer.
struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        // A length over u32::MAX cannot reach here: the engine refuses values over 4 GiB and
        // HTTP bodies are far smaller; saturate rather than wrap if one ever did.
        self.u32(u32::try_from(b.len()).unwrap_or(u32::MAX));
        self.0.extend_from_slice(b);
    }
    fn log_id(&mut self, id: &LogId) {
        self.u64(id.leader_id.term);
        self.u64(id.leader_id.node_id);
        self.u64(id.index);
    }
    fn opt_log_id(&mut self, id: Option<&LogId>) {
        match id {
            None => self.u8(0),
            Some(id) => {
                self.u8(1);
                self.log_id(id);
            }
        }
    }
    fn membership(&mut self, m: &Membership) {
        let configs = m.get_joint_config();
        self.u32(configs.len() as u32);
        for c in configs {
            self.u32(c.len() as u32);
            for id in c {
                self.u64(*id);
            }
        }
        let nodes: Vec<(&NodeId, &Node)> = m.nodes().collect();
        self.u32(nodes.len() as u32);
        for (id, node) in nodes {
            self.u64(*id);
            self.bytes(node.addr.as_bytes());
        }
    }
    fn stored_membership(&mut self, m: &StoredMembership) {
        self.opt_log_id(m.log_id().as_ref());
        self.membership(m.membership());
    }
}

/// Reads what [`Writer`] wrote, refusing anything else with `Corruption`.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    what: &'a str,
}

impl<'a> Reader<'a> {
    /// Starts reading record `what` (named in errors) and checks its version byte.
    fn new(buf: &'a [u8], what: &'a str) -> Result<Reader<'a>, Error> {
        let mut r = Reader { buf, pos: 0, what };
        let v = r.u8()?;
        if v != VERSION {
            return Err(r.bad(0, format!("format version {v}, expected {VERSION}")));
        }
        Ok(r)
    }
    fn bad(&self, offset: usize, detail: String) -> Error {
        Error::corruption(format!("raft record {}", self.what), offset as u64, detail)
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let Some(end) = end else {
            let left = self.buf.len() - self.pos;
            return Err(self.bad(self.pos, format!("needs {n} more bytes, {left} left")));
        };
        let s = self.buf.get(self.pos..end).unwrap_or(&[]);
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?.first().copied().unwrap_or(0))
    }
    fn u32(&mut self) -> Result<u32, Error> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
    }
    fn u64(&mut self) -> Result<u64, Error> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }
    fn bytes(&mut self) -> Result<&'a [u8], Error> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn string(&mut self) -> Result<String, Error> {
        let at = self.pos;
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| self.bad(at, "a string that is not UTF-8".into()))
    }
    /// A count of items each at least `min_item` bytes long, checked against the bytes left (a
    /// corrupt count cannot make the decoder allocate gigabytes).
    fn count(&mut self, min_item: usize) -> Result<usize, Error> {
        let at = self.pos;
        let n = self.u32()? as usize;
        let left = self.buf.len() - self.pos;
        if n.saturating_mul(min_item) > left {
            return Err(self.bad(at, format!("a count of {n} items in {left} bytes")));
        }
        Ok(n)
    }
    fn log_id(&mut self) -> Result<LogId, Error> {
        let term = self.u64()?;
        let node_id = self.u64()?;
        let index = self.u64()?;
        Ok(LogId::new(openraft::CommittedLeaderId::new(term, node_id), index))
    }
    fn opt_log_id(&mut self) -> Result<Option<LogId>, Error> {
        let at = self.pos;
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.log_id()?)),
            t => Err(self.bad(at, format!("log id presence byte {t}"))),
        }
    }
    fn membership(&mut self) -> Result<Membership, Error> {
        let n_configs = self.count(4)?;
        let mut configs = Vec::with_capacity(n_configs);
        for _ in 0..n_configs {
            let n = self.count(8)?;
            let mut c = BTreeSet::new();
            for _ in 0..n {
                let at = self.pos;
                if !c.insert(self.u64()?) {
                    return Err(self.bad(at, "a node id twice in one config".into()));
                }
            }
            configs.push(c);
        }
        let n_nodes = self.count(12)?;
        let mut nodes = BTreeMap::new();
        for _ in 0..n_nodes {
            let at = self.pos;
            let id = self.u64()?;
            let addr = self.string()?;
            if nodes.insert(id, Node { addr }).is_some() {
                return Err(self.bad(at, format!("node {id} listed twice")));
            }
        }
        for id in configs.iter().flatten() {
            if !nodes.contains_key(id) {
                return Err(self.bad(self.pos, format!("voter {id} has no node record")));
            }
        }
        Ok(Membership::new(configs, nodes))
    }
    fn stored_membership(&mut self) -> Result<StoredMembership, Error> {
        let log_id = self.opt_log_id()?;
        Ok(StoredMembership::new(log_id, self.membership()?))
    }
    /// Refuses bytes after the record's end.
    fn finish<T>(self, v: T) -> Result<T, Error> {
        if self.pos != self.buf.len() {
            let extra = self.buf.len() - self.pos;
            return Err(self.bad(self.pos, format!("{extra} bytes after the record's end")));
        }
        Ok(v)
    }
}

/// Encodes a log entry: version, log id, payload tag, payload.
pub fn encode_entry(e: &Entry, out: &mut Vec<u8>) {
    let mut w = Writer(out);
    w.u8(VERSION);
    w.log_id(&e.log_id);
    match &e.payload {
        openraft::EntryPayload::Blank => w.u8(PAYLOAD_BLANK),
        openraft::EntryPayload::Normal(req) => {
            w.u8(PAYLOAD_NORMAL);
            match req {
                Request::Put { key, value } => {
                    w.u8(OP_PUT);
                    w.bytes(key.as_bytes());
                    w.bytes(value.as_bytes());
                }
                Request::Delete { key } => {
                    w.u8(OP_DELETE);
                    w.bytes(key.as_bytes());
                }
            }
        }
        openraft::EntryPayload::Membership(m) => {
            w.u8(PAYLOAD_MEMBERSHIP);
            w.membership(m);
        }
    }
}

/// Decodes a log entry.
pub fn decode_entry(b: &[u8]) -> Result<Entry, Error> {
    let mut r = Reader::new(b, "log entry")?;
    let log_id = r.log_id()?;
    let at = r.pos;
    let payload = match r.u8()? {
        PAYLOAD_BLANK => openraft::EntryPayload::Blank,
        PAYLOAD_NORMAL => {
            let at = r.pos;
            let req = match r.u8()? {
                OP_PUT => Request::Put { key: r.string()?, value: r.string()? },
                OP_DELETE => Request::Delete { key: r.string()? },
                op => return Err(r.bad(at, format!("request op {op}"))),
            };
            openraft::EntryPayload::Normal(req)
        }
        PAYLOAD_MEMBERSHIP => openraft::EntryPayload::Membership(r.membership()?),
        t => return Err(r.bad(at, format!("payload tag {t}"))),
    };
    r.finish(Entry { log_id, payload })
}

/// Reads only the log id of an encoded entry (bytes 1..25), without decoding its payload.
pub fn entry_log_id(b: &[u8]) -> Result<LogId, Error> {
    let mut r = Reader::new(b, "log entry")?;
    r.log_id()
}

/// Encodes a vote: version, term, node id, committed (0 or 1).
pub fn encode_vote(v: &Vote) -> Vec<u8> {
    let mut out = Vec::with_capacity(18);
    let mut w = Writer(&mut out);
    w.u8(VERSION);
    w.u64(v.leader_id.term);
    w.u64(v.leader_id.node_id);
    w.u8(u8::from(v.committed));
    out
}

/// Decodes a vote.
pub fn decode_vote(b: &[u8]) -> Result<Vote, Error> {
    let mut r = Reader::new(b, "vote")?;
    let term = r.u64()?;
    let node_id = r.u64()?;
    let at = r.pos;
    let committed = match r.u8()? {
        0 => false,
        1 => true,
        c => return Err(r.bad(at, format!("committed byte {c}"))),
    };
    let vote =
        if committed { Vote::new_committed(term, node_id) } else { Vote::new(term, node_id) };
    r.finish(vote)
}

/// Encodes an optional log id (the committed index, the last purged id, the last applied id).
pub fn encode_opt_log_id(id: Option<&LogId>) -> Vec<u8> {
    let mut out = Vec::with_capacity(26);
    let mut w = Writer(&mut out);
    w.u8(VERSION);
    w.opt_log_id(id);
    out
}

/// Decodes an optional log id; `what` names the record in errors.
pub fn decode_opt_log_id(b: &[u8], what: &str) -> Result<Option<LogId>, Error> {
    let mut r = Reader::new(b, what)?;
    let id = r.opt_log_id()?;
    r.finish(id)
}

/// Encodes a stored membership (the state machine's last applied membership).
pub fn encode_stored_membership(m: &StoredMembership) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = Writer(&mut out);
    w.u8(VERSION);
    w.stored_membership(m);
    out
}

/// Decodes a stored membership.
pub fn decode_stored_membership(b: &[u8]) -> Result<StoredMembership, Error> {
    let mut r = Reader::new(b, "membership")?;
    let m = r.stored_membership()?;
    r.finish(m)
}

/// Encodes snapshot metadata: version, last log id, last membership, snapshot id.
pub fn encode_snapshot_meta(m: &SnapshotMeta) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = Writer(&mut out);
    w.u8(VERSION);
    w.opt_log_id(m.last_log_id.as_ref());
    w.stored_membership(&m.last_membership);
    w.bytes(m.snapshot_id.as_bytes());
    out
}

/// Decodes snapshot metadata.
pub fn decode_snapshot_meta(b: &[u8]) -> Result<SnapshotMeta, Error> {
    let mut r = Reader::new(b, "snapshot meta")?;
    let last_log_id = r.opt_log_id()?;
    let last_membership = r.stored_membership()?;
    let snapshot_id = r.string()?;
    r.finish(SnapshotMeta { last_log_id, last_membership, snapshot_id })
}

/// Encodes the data directory's identity: version, node id.
pub fn encode_node_id(id: NodeId) -> Vec<u8> {
    let mut out = Vec::with_capacity(9);
    let mut w = Writer(&mut out);
    w.u8(VERSION);
    w.u64(id);
    out
}

/// Decodes the data directory's identity.
pub fn decode_node_id(b: &[u8]) -> Result<NodeId, Error> {
    let mut r = Reader::new(b, "node id")?;
    let id = r.u64()?;
    r.finish(id)
}

#[cfg(test)]
#[path = "codec_tests.rs"]
mod tests;
