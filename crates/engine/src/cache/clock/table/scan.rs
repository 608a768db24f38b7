//! Looking at a [`ClockTable`]'s values without using them: whether a value is pinned (held
//! outside the cache), and a visit of every visible entry (for usage-by-role statistics).
//! Both hold a slot reference (or ownership) while they look; neither counts as a use.

use super::*;

impl<V> ClockTable<V> {
    /// True if the slot's value has holders besides the slot. The caller holds a reference on
    /// the slot (so the value cannot be dropped meanwhile).
    pub(in crate::cache::clock) fn value_pinned(&self, slot: &Slot<V>) -> bool {
        let p = slot.value.load(Relaxed);
        if p.is_null() {
            return false;
        }
        // SAFETY: `p` is the slot's own `Arc::into_raw` reference, alive while the caller owns
        // or references the slot; `ManuallyDrop` keeps the count unchanged.
        let v = std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(p) });
        Arc::strong_count(&v) > 1
    }

    /// Calls `f(value, charge)` for each visible entry, holding a slot reference during the call
    /// (which neither counts as a use nor pins the value).
    pub(in crate::cache::clock) fn for_each(&self, f: &mut dyn FnMut(&Arc<V>, usize)) {
        for i in 0..self.slots.len() {
            let slot = self.slot(i);
            let old = slot.meta.fetch_add(ACQUIRE_INC, Acquire);
            match state(old) {
                VISIBLE => {
                    let p = slot.value.load(Relaxed);
                    if !p.is_null() {
                        // SAFETY: as in `value_pinned`: our reference keeps the value alive.
                        let v = std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(p) });
                        f(&v, slot.charge.load(Relaxed));
                    }
                    self.undo_acquire(i);
                }
                INVISIBLE => self.undo_acquire(i),
                _ => {}
            }
        }
    }
}
