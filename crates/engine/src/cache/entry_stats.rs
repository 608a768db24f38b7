//! Block cache statistics by role (RocksDB's "Block cache entry stats"), computed by one scan
//! of the cache ([`Cache::for_each_entry`]), and their text forms for the
//! `talus.block-cache-entry-stats` property and `talus.stats`.
//!
//! Called by the `Db::property` code; holds each cache shard's lock (LRU) or a slot reference
//! (clock) only while visiting it.

use std::fmt::Write as _;

use super::Cache;
use crate::sst::{Block, BlockRole};

/// Count and bytes of one role's entries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoleStats {
    /// Entries held.
    pub count: u64,
    /// Bytes charged.
    pub bytes: u64,
    /// Of those bytes, pinned (held outside the cache too).
    pub pinned_bytes: u64,
}

/// One scan of a block cache.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockCacheStats {
    /// The implementation (`LRUCache`, `HyperClockCache`).
    pub name: &'static str,
    /// Configured capacity in bytes.
    pub capacity: u64,
    /// Bytes charged ([`Cache::usage`], read before the scan).
    pub usage: u64,
    /// Per role, indexed by [`BlockRole::index`].
    pub roles: [RoleStats; 4],
}

impl BlockCacheStats {
    /// Scans `cache`.
    pub fn collect(cache: &dyn Cache<Block>) -> BlockCacheStats {
        let mut s = BlockCacheStats {
            name: cache.name(),
            capacity: cache.capacity() as u64,
            usage: cache.usage() as u64,
            roles: [RoleStats::default(); 4],
        };
        cache.for_each_entry(&mut |b: &Block, charge, pinned| {
            if let Some(r) = s.roles.get_mut(b.role().index()) {
                r.count += 1;
                r.bytes += charge as u64;
                if pinned {
                    r.pinned_bytes += charge as u64;
                }
            }
        });
        s
    }

    /// Bytes of pinned entries, all roles.
    pub fn pinned_usage(&self) -> u64 {
        self.roles.iter().map(|r| r.pinned_bytes).sum()
    }

    /// The stats of one role.
    pub fn role(&self, role: BlockRole) -> RoleStats {
        self.roles.get(role.index()).copied().unwrap_or_default()
    }

    /// RocksDB's two lines: `Block cache <name> capacity: .. usage: ..` and
    /// `Block cache entry stats(count,size,portion): DataBlock(n,size,pct%) ...` (roles with
    /// no entries are left out, as RocksDB does).
    pub fn render(&self) -> String {
        let mut s = format!(
            "Block cache {} capacity: {} usage: {} pinned: {}\n",
            self.name,
            human_bytes(self.capacity),
            human_bytes(self.usage),
            human_bytes(self.pinned_usage())
        );
        s.push_str("Block cache entry stats(count,size,portion):");
        for role in BlockRole::ALL {
            let r = self.role(role);
            if r.count == 0 {
                continue;
            }
            let portion = if self.capacity == 0 {
                0.0
            } else {
                100.0 * r.bytes as f64 / self.capacity as f64
            };
            let _ =
                write!(s, " {}({},{},{:.3}%)", role.name(), r.count, human_bytes(r.bytes), portion);
        }
        s.push('\n');
        s
    }
}

/// RocksDB's `BytesToHumanString`: `0.09 KB`, `8.00 MB`, ...
fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::cache::{HyperClockCache, LruCache, Priority};

    fn block(role: BlockRole) -> Block {
        let data = if role == BlockRole::Filter {
            let mut d = vec![0u8; 64];
            d.push(6);
            d
        } else {
            vec![0, 0, 0, 0, 1, 0, 0, 0]
        };
        Block::with_role(data, Arc::from("t"), 0, role).unwrap()
    }

    fn check(cache: &dyn Cache<Block>) {
        cache.insert((1, 0), block(BlockRole::Data), 100);
        cache.insert((1, 1), block(BlockRole::Data), 50);
        let pinned = cache.insert_and_hold((1, 2), block(BlockRole::Index), 30, Priority::High);
        assert!(pinned.is_ok(), "inserted");
        cache.insert_with_priority((1, 3), block(BlockRole::Filter), 20, Priority::High);
        let s = BlockCacheStats::collect(cache);
        assert_eq!(s.usage, 200);
        assert_eq!(s.role(BlockRole::Data), RoleStats { count: 2, bytes: 150, pinned_bytes: 0 });
        assert_eq!(s.role(BlockRole::Index), RoleStats { count: 1, bytes: 30, pinned_bytes: 30 });
        assert_eq!(s.role(BlockRole::Filter).bytes, 20);
        assert_eq!(s.pinned_usage(), 30);
        assert_eq!(cache.pinned_usage(), 30);
        let text = s.render();
        assert!(text.contains("DataBlock(2,150 B,"), "{text}");
        assert!(text.contains("IndexBlock(1,30 B,"), "{text}");
        assert!(!text.contains("Misc"), "{text}");
        drop(pinned);
        assert_eq!(cache.pinned_usage(), 0);
    }

    #[test]
    fn per_role_counts_bytes_and_pinned_both_caches() {
        check(&LruCache::new(1 << 20, 2, false));
        check(&HyperClockCache::new(1 << 20, 64, 2, false));
        assert_eq!(human_bytes(8 << 20), "8.00 MB");
        assert_eq!(human_bytes(92), "92 B");
    }
}
