//! The memtable's [`InternalIterator`]: a cursor over the skiplist's point entries that owns an
//! `Arc<MemTable>`, so the nodes it points at outlive it. Lock-free; sees entries added while it
//! is open in some unspecified but always sorted way. `prev` and `seek_to_last` search from the
//! head (as LevelDB's `SkipList::Iterator`): O(log n) each.

use std::sync::Arc;

use super::skiplist::{key_prefix, NodePtr};
use super::MemTable;
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key::{compare_internal, user_key};

/// An iterator over a memtable's point entries (see [`MemTable::iter`]).
pub struct MemTableIterator {
    mem: Arc<MemTable>,
    /// The current node; always a node of `mem.list`.
    node: Option<NodePtr>,
}

impl MemTableIterator {
    /// An unpositioned iterator over `mem`.
    pub fn new(mem: Arc<MemTable>) -> Self {
        MemTableIterator { mem, node: None }
    }
}

impl InternalIterator for MemTableIterator {
    fn valid(&self) -> bool {
        self.node.is_some()
    }
    fn seek_to_first(&mut self) {
        self.node = self.mem.list.first();
    }
    fn seek_to_last(&mut self) {
        self.node = self.mem.list.last();
    }
    fn seek(&mut self, target: &[u8]) {
        let prefix = key_prefix(user_key(target));
        self.node = self.mem.list.seek_ge(Some(prefix), |k| compare_internal(k, target));
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        let prefix = key_prefix(user_key(target));
        self.node = self.mem.list.seek_le(Some(prefix), |k| compare_internal(k, target));
    }
    fn next(&mut self) {
        if let Some(n) = self.node {
            self.node = self.mem.list.next_of(n);
        }
    }
    fn prev(&mut self) {
        if let Some(n) = self.node {
            let list = &self.mem.list;
            let key = list.key(n);
            let prefix = key_prefix(user_key(key));
            self.node = list.seek_lt(Some(prefix), |k| compare_internal(k, key));
        }
    }
    fn key(&self) -> &[u8] {
        self.node.map_or(&[], |n| self.mem.list.key(n))
    }
    fn value(&self) -> &[u8] {
        self.node.map_or(&[], |n| self.mem.list.value(n))
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}
