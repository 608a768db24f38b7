//! `Block::new` + `BlockIter` over arbitrary bytes: no panic, only `Corruption`; iteration ends
//! (an entry takes at least 3 bytes, so a walk has at most `len / 3` steps).
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use talus::iter::InternalIterator;
use talus::sst::Block;

fuzz_target!(|input: (Vec<u8>, Vec<u8>)| {
    let (data, target) = input;
    let max_steps = data.len() / 3 + 2;
    let block = match Block::new(data, "fuzz.sst".into(), 0) {
        Ok(b) => Arc::new(b),
        Err(e) => {
            assert!(e.is_corruption(), "{e}");
            return;
        }
    };
    let mut it = talus::sst::BlockIter::new(block);
    let check = |it: &dyn InternalIterator| {
        if let Err(e) = it.status() {
            assert!(e.is_corruption(), "{e}");
        }
    };
    it.seek_to_first();
    let mut steps = 0;
    while it.valid() {
        let _ = (it.key().len(), it.value().len());
        it.next();
        steps += 1;
        assert!(steps <= max_steps, "forward walk does not end");
    }
    check(&it);
    it.seek_to_last();
    steps = 0;
    while it.valid() {
        it.prev();
        steps += 1;
        assert!(steps <= max_steps, "backward walk does not end");
    }
    check(&it);
    it.seek(&target);
    if it.valid() {
        it.prev();
        it.next();
    }
    check(&it);
    it.seek_for_prev(&target);
    check(&it);
});
