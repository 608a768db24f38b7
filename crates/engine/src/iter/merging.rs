//! Merges child iterators into one stream in internal-key order, in both directions.
//!
//! LevelDB's `MergingIterator` is the model, with a binary heap of child indices instead of a
//! linear scan: a min-heap while moving forward, a max-heap while moving backward. Equal internal
//! keys come out lower child index first going forward (children are passed newest first), and
//! in the exact reverse order going backward, so `next` and `prev` are inverses.
//!
//! Direction switches reposition every non-current child around the current key (LevelDB's
//! rule): switching to forward, each child seeks to the first entry after the current position;
//! switching to backward, each child moves to the last entry before it.
//!
//! Errors: a child that turns invalid is asked for its status; the first error seen makes the
//! merging iterator invalid (yielding entries without that child could expose shadowed data)
//! and is what [`InternalIterator::status`] reports from then on (errors are sticky for the
//! iterator's life). Owned by one reader; no locks.

use std::cmp::Ordering;

use super::InternalIterator;
use crate::error::{Error, Result};
use crate::key::compare_internal;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    Forward,
    Backward,
}

/// A k-way merge of [`InternalIterator`]s. When two children hold equal keys, the child with the
/// lower index comes first (children are passed newest first).
pub struct MergingIterator {
    children: Vec<Box<dyn InternalIterator>>,
    /// Indices of the valid children, a heap ordered by `before` for `dir`; the top is current.
    heap: Vec<usize>,
    dir: Direction,
    err: Option<Error>,
}

/// True if child `a` must come out before child `b` in direction `dir`.
#[inline]
fn before(children: &[Box<dyn InternalIterator>], dir: Direction, a: usize, b: usize) -> bool {
    let (Some(ca), Some(cb)) = (children.get(a), children.get(b)) else { return false };
    let o = compare_internal(ca.key(), cb.key()).then(a.cmp(&b));
    match dir {
        Direction::Forward => o == Ordering::Less,
        Direction::Backward => o == Ordering::Greater,
    }
}

fn sift_down(
    heap: &mut [usize],
    children: &[Box<dyn InternalIterator>],
    dir: Direction,
    mut i: usize,
) {
    loop {
        let l = 2 * i + 1;
        let r = l + 1;
        let mut best = i;
        for c in [l, r] {
            if let (Some(&hc), Some(&hb)) = (heap.get(c), heap.get(best)) {
                if before(children, dir, hc, hb) {
                    best = c;
                }
            }
        }
        if best == i {
            return;
        }
        heap.swap(i, best);
        i = best;
    }
}

impl MergingIterator {
    /// Merges `children` (newest source first).
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> Self {
        let n = children.len();
        MergingIterator {
            children,
            heap: Vec::with_capacity(n),
            dir: Direction::Forward,
            err: None,
        }
    }

    fn current(&self) -> Option<usize> {
        self.heap.first().copied()
    }

    /// Records the status of child `i` if it is invalid with an error.
    fn check(&mut self, i: usize) {
        if self.err.is_some() {
            return;
        }
        if let Some(c) = self.children.get(i) {
            if !c.valid() {
                if let Err(e) = c.status() {
                    self.err = Some(e);
                }
            }
        }
    }

    /// Rebuilds the heap from every valid child for direction `dir`.
    fn rebuild(&mut self, dir: Direction) {
        self.dir = dir;
        self.heap.clear();
        for i in 0..self.children.len() {
            self.check(i);
            if self.children.get(i).is_some_and(|c| c.valid()) {
                self.heap.push(i);
            }
        }
        for i in (0..self.heap.len() / 2).rev() {
            sift_down(&mut self.heap, &self.children, dir, i);
        }
    }

    /// After the current child moved: drop it if exhausted, else restore the heap.
    fn fix_top(&mut self) {
        let Some(top) = self.current() else { return };
        if self.children.get(top).is_some_and(|c| c.valid()) {
            sift_down(&mut self.heap, &self.children, self.dir, 0);
        } else {
            self.check(top);
            self.heap.swap_remove(0);
            sift_down(&mut self.heap, &self.children, self.dir, 0);
        }
    }

    fn for_each_child(&mut self, mut f: impl FnMut(&mut dyn InternalIterator)) {
        for c in &mut self.children {
            f(c.as_mut());
        }
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        self.err.is_none() && !self.heap.is_empty()
    }
    fn seek_to_first(&mut self) {
        self.for_each_child(|c| c.seek_to_first());
        self.rebuild(Direction::Forward);
    }
    fn seek_to_last(&mut self) {
        self.for_each_child(|c| c.seek_to_last());
        self.rebuild(Direction::Backward);
    }
    fn seek(&mut self, target: &[u8]) {
        self.for_each_child(|c| c.seek(target));
        self.rebuild(Direction::Forward);
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.for_each_child(|c| c.seek_for_prev(target));
        self.rebuild(Direction::Backward);
    }
    fn next(&mut self) {
        if !self.valid() {
            return;
        }
        let Some(cur) = self.current() else { return };
        if self.dir == Direction::Backward {
            // Every other child moves to its first entry after the current position: entries
            // equal to the current key come after it only in higher-indexed children.
            let (left, rest) = self.children.split_at_mut(cur);
            let Some((cur_child, right)) = rest.split_first_mut() else { return };
            let key = cur_child.key();
            for c in left.iter_mut() {
                c.seek(key);
                if c.valid() && compare_internal(c.key(), key) == Ordering::Equal {
                    c.next();
                }
            }
            for c in right.iter_mut() {
                c.seek(key);
            }
            if let Some(c) = self.children.get_mut(cur) {
                c.next();
            }
            self.rebuild(Direction::Forward);
            return;
        }
        if let Some(c) = self.children.get_mut(cur) {
            c.next();
        }
        self.fix_top();
    }
    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        let Some(cur) = self.current() else { return };
        if self.dir == Direction::Forward {
            // Every other child moves to its last entry before the current position: entries
            // equal to the current key come before it only in lower-indexed children.
            let (left, rest) = self.children.split_at_mut(cur);
            let Some((cur_child, right)) = rest.split_first_mut() else { return };
            let key = cur_child.key();
            for c in left.iter_mut() {
                c.seek_for_prev(key);
            }
            for c in right.iter_mut() {
                c.seek_for_prev(key);
                if c.valid() && compare_internal(c.key(), key) == Ordering::Equal {
                    c.prev();
                }
            }
            if let Some(c) = self.children.get_mut(cur) {
                c.prev();
            }
            self.rebuild(Direction::Backward);
            return;
        }
        if let Some(c) = self.children.get_mut(cur) {
            c.prev();
        }
        self.fix_top();
    }
    fn key(&self) -> &[u8] {
        match self.current().and_then(|i| self.children.get(i)) {
            Some(c) if self.err.is_none() => c.key(),
            _ => &[],
        }
    }
    fn value(&self) -> &[u8] {
        match self.current().and_then(|i| self.children.get(i)) {
            Some(c) if self.err.is_none() => c.value(),
            _ => &[],
        }
    }
    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.duplicate()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
