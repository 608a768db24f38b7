//! A visit of every visible entry of a table (for usage-by-role statistics and the pinned
//! usage). It holds a slot reference while it looks, which counts neither as a use nor as a
//! pin.

use super::*;

impl<V> Core<V> {
    /// Calls `f(value, charge, pinned)` for each visible entry, holding a slot reference during
    /// the call; `pinned` is true if someone else holds a handle on the entry.
    pub(in crate::cache::clock) fn for_each(&self, f: &mut dyn FnMut(&V, usize, bool)) {
        for i in 0..self.slots.len() {
            let slot = self.slot(i);
            let old = slot.meta.fetch_add(ACQUIRE_INC, Acquire);
            match state(old) {
                VISIBLE => {
                    // SAFETY: our reference (taken above, state visible) keeps the value put.
                    f(unsafe { slot.value() }, slot.charge.load(Relaxed), refcount(old) > 0);
                    self.undo_acquire(i);
                }
                INVISIBLE => self.undo_acquire(i),
                _ => {}
            }
        }
    }
}
