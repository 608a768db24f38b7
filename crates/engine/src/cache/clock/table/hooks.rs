//! Test hooks into a table's slots (compiled for tests only).

use super::*;

impl<V> Core<V> {
    /// Test hook: sets both counters of the visible entry for `key` to `count` (to exercise
    /// overflow correction without 2^29 lookups). Returns false if the key is not found.
    pub(in crate::cache::clock) fn set_counters_for_test(
        &self,
        hash: u64,
        key: CacheKey,
        count: u64,
    ) -> bool {
        for i in probe(hash, self.mask) {
            let slot = self.slot(i);
            let meta = slot.meta.load(Acquire);
            if state(meta) == VISIBLE && slot.key() == key {
                slot.meta.store(shareable_meta(VISIBLE, count & COUNTER_MASK, 0), Release);
                return true;
            }
        }
        false
    }

    /// Test hook: (state, acquire count, release count) of the entry for `key`, if any.
    pub(in crate::cache::clock) fn meta_for_test(
        &self,
        hash: u64,
        key: CacheKey,
    ) -> Option<(u64, u64, u64)> {
        probe(hash, self.mask).map(|i| self.slot(i)).find_map(|slot| {
            let meta = slot.meta.load(Acquire);
            (state(meta) >= INVISIBLE && slot.key() == key)
                .then(|| (state(meta), acquires(meta), releases(meta)))
        })
    }

    /// Test hook: sum of all displacement counts (zero when the table is empty and quiet).
    pub(in crate::cache::clock) fn displacements_for_test(&self) -> u64 {
        self.slots.iter().map(|s| u64::from(s.displacements.load(Acquire))).sum()
    }
}
