//! The `memory` engine: a `BTreeMap` behind a `parking_lot::RwLock`. No durability, no
//! background work: the ceiling an ordered store could reach. Iterators never hold the lock
//! between calls: they copy a small run of entries (values are `Arc`s, so cheaply) and refill it
//! from the last key they returned.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use parking_lot::RwLock;

use super::{EResult, Engine, EngineIter, Ops};

type Map = BTreeMap<Vec<u8>, Arc<[u8]>>;

/// The in-memory engine.
pub struct MemoryEngine {
    map: RwLock<Map>,
    merge: Option<Arc<dyn talus::MergeOperator>>,
}

impl MemoryEngine {
    /// An empty store.
    pub fn new() -> Self {
        MemoryEngine { map: RwLock::new(BTreeMap::new()), merge: None }
    }

    /// Merges with `op` (applied at once, under the write lock).
    pub fn with_merge_operator(mut self, op: Option<Arc<dyn talus::MergeOperator>>) -> Self {
        self.merge = op;
        self
    }
}

impl Engine for MemoryEngine {
    fn put(&self, key: &[u8], value: &[u8]) -> EResult<()> {
        let v: Arc<[u8]> = value.into();
        self.map.write().insert(key.to_vec(), v);
        Ok(())
    }

    fn write(&self, ops: &Ops) -> EResult<()> {
        let mut m = self.map.write();
        for (del, k, v) in ops.iter() {
            if del {
                m.remove(k);
            } else {
                m.insert(k.to_vec(), v.into());
            }
        }
        Ok(())
    }

    fn merge(&self, key: &[u8], value: &[u8]) -> EResult<()> {
        let op = self.merge.as_ref().ok_or("merge needs --merge_operator")?;
        let mut m = self.map.write();
        let v = op.full_merge(key, m.get(key).map(|v| &v[..]), &[value]).map_err(|e| e.message)?;
        m.insert(key.to_vec(), v.into());
        Ok(())
    }

    fn get(&self, key: &[u8]) -> EResult<Option<usize>> {
        let m = self.map.read();
        match m.get(key) {
            Some(v) => Ok(Some(std::hint::black_box(v).len())),
            None => Ok(None),
        }
    }

    fn get_value(&self, key: &[u8]) -> EResult<Option<Vec<u8>>> {
        Ok(self.map.read().get(key).map(|v| v.to_vec()))
    }

    fn multi_get(&self, keys: &[Vec<u8>], sizes: &mut Vec<Option<usize>>) -> EResult<()> {
        let m = self.map.read();
        sizes.clear();
        sizes.extend(keys.iter().map(|k| m.get(k.as_slice()).map(|v| v.len())));
        Ok(())
    }

    fn iter(&self) -> Box<dyn EngineIter + '_> {
        Box::new(MemIter {
            map: &self.map,
            buf: Vec::new(),
            pos: 0,
            forward: true,
            chunk: FIRST_CHUNK,
        })
    }

    fn flush(&self) -> EResult<()> {
        Ok(())
    }

    fn compact(&self) -> EResult<()> {
        Ok(())
    }

    fn wait_for_compaction(&self) -> EResult<()> {
        Ok(())
    }

    fn property(&self, name: &str) -> Option<String> {
        match name {
            "stats" | "levelstats" => Some(format!(
                "memory engine: {} keys in a BTreeMap (no levels, no files)\n",
                self.map.read().len()
            )),
            _ => None,
        }
    }

    fn memtable_name(&self) -> &'static str {
        "BTreeMap"
    }
}

/// Entries copied by the first fill after a seek; each refill doubles it up to [`MAX_CHUNK`],
/// so a short scan copies little and a long one amortizes the lookups.
const FIRST_CHUNK: usize = 8;
const MAX_CHUNK: usize = 256;

struct MemIter<'a> {
    map: &'a RwLock<Map>,
    /// A run of entries in iteration order (ascending if `forward`).
    buf: Vec<(Vec<u8>, Arc<[u8]>)>,
    pos: usize,
    forward: bool,
    chunk: usize,
}

impl MemIter<'_> {
    fn fill(&mut self, lower: Bound<&[u8]>, upper: Bound<&[u8]>, forward: bool) {
        let m = self.map.read();
        self.buf.clear();
        self.pos = 0;
        self.forward = forward;
        let r = m.range::<[u8], _>((lower, upper));
        let take = |(k, v): (&Vec<u8>, &Arc<[u8]>)| (k.clone(), v.clone());
        if forward {
            self.buf.extend(r.take(self.chunk).map(take));
        } else {
            self.buf.extend(r.rev().take(self.chunk).map(take));
        }
        self.chunk = (self.chunk * 2).min(MAX_CHUNK);
    }
}

impl EngineIter for MemIter<'_> {
    fn seek(&mut self, key: &[u8]) {
        self.chunk = FIRST_CHUNK;
        self.fill(Bound::Included(key), Bound::Unbounded, true);
    }
    fn seek_to_first(&mut self) {
        self.chunk = FIRST_CHUNK;
        self.fill(Bound::Unbounded, Bound::Unbounded, true);
    }
    fn seek_to_last(&mut self) {
        self.chunk = FIRST_CHUNK;
        self.fill(Bound::Unbounded, Bound::Unbounded, false);
    }
    fn next(&mut self) {
        if self.forward && self.pos + 1 < self.buf.len() {
            self.pos += 1;
            return;
        }
        if let Some((k, _)) = self.buf.get(self.pos) {
            let k = k.clone();
            self.fill(Bound::Excluded(&k), Bound::Unbounded, true);
        }
    }
    fn prev(&mut self) {
        if !self.forward && self.pos + 1 < self.buf.len() {
            self.pos += 1;
            return;
        }
        if let Some((k, _)) = self.buf.get(self.pos) {
            let k = k.clone();
            self.fill(Bound::Unbounded, Bound::Excluded(&k), false);
        }
    }
    fn valid(&self) -> bool {
        self.pos < self.buf.len()
    }
    fn key(&self) -> &[u8] {
        self.buf.get(self.pos).map(|(k, _)| k.as_slice()).unwrap_or(&[])
    }
    fn value(&self) -> &[u8] {
        self.buf.get(self.pos).map(|(_, v)| &v[..]).unwrap_or(&[])
    }
    fn status(&self) -> EResult<()> {
        Ok(())
    }
}
