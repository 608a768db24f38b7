//! The model test's oracle: for each key, the values a correct database may return.
//!
//! Without a compaction filter that is one value (or none) per key, the `BTreeMap` model of
//! the writes. The model test runs with a deterministic filter ([`ModelFilter`]: values
//! starting with [`REMOVE_MARK`] are removed, those starting with [`CHANGE_MARK`] get
//! [`CHANGED_MARK`] instead), which compactions apply when they happen to rewrite a key, a
//! moment the test cannot see. So a key holds a set of states: after each write, every state a
//! filter could have made of it is added (RocksDB's rules: a filter sees the newest value of a
//! key in a compaction, whatever the snapshots; values made by merging are written unfiltered
//! and filtered by a later compaction, so the filtered forms of merge results belong too).
//! Merge operands are not filtered by this filter (the compaction iterator's unit tests cover
//! operand filtering). Merges follow [`crate::common::append_operand`].

use std::collections::BTreeMap;
use std::ops::Bound;

use talus::{CompactionFilter, FilterDecision, FilterValueType};

use crate::common::{append_operand, show, Model, WriteOp};

/// Values starting with this byte are removed by the model's filter.
pub(crate) const REMOVE_MARK: u8 = b'~';
/// Values starting with this byte are changed by the model's filter...
pub(crate) const CHANGE_MARK: u8 = b'^';
/// ...to start with this one (which the filter keeps).
pub(crate) const CHANGED_MARK: u8 = b'=';

/// What the model's filter does to a value.
pub(crate) fn model_decision(v: &[u8]) -> FilterDecision {
    match v.first() {
        Some(&REMOVE_MARK) => FilterDecision::Remove,
        Some(&CHANGE_MARK) => {
            let mut w = v.to_vec();
            w[0] = CHANGED_MARK;
            FilterDecision::ChangeValue(w)
        }
        _ => FilterDecision::Keep,
    }
}

/// The deterministic compaction filter every model case runs with.
pub(crate) struct ModelFilter;

impl CompactionFilter for ModelFilter {
    fn name(&self) -> &str {
        "ModelFilter"
    }
    fn filter(&self, _level: usize, _key: &[u8], t: FilterValueType, v: &[u8]) -> FilterDecision {
        match t {
            FilterValueType::Value => model_decision(v),
            FilterValueType::MergeOperand => FilterDecision::Keep,
        }
    }
}

/// The states a key may be read in (sorted, no duplicates; `None`: absent).
type States = Vec<Option<Vec<u8>>>;

/// `s` with every state the filter can make of one of them added.
fn closure(mut s: States) -> States {
    let extra: Vec<Option<Vec<u8>>> = s
        .iter()
        .flatten()
        .filter_map(|v| match model_decision(v) {
            FilterDecision::Keep => None,
            FilterDecision::Remove => Some(None),
            FilterDecision::ChangeValue(w) => Some(Some(w)),
        })
        .collect();
    s.extend(extra);
    s.sort();
    s.dedup();
    s
}

/// Keys to the states they may be read in; a key not held can only be absent.
#[derive(Clone, Default, Debug, PartialEq)]
pub(crate) struct Oracle {
    keys: BTreeMap<Vec<u8>, States>,
}

impl Oracle {
    /// An oracle of exactly `m` (and what the filter can make of it).
    pub(crate) fn from_model(m: &Model) -> Oracle {
        let keys = m.iter().map(|(k, v)| (k.clone(), closure(vec![Some(v.clone())]))).collect();
        Oracle { keys }
    }

    /// The one state of every key as a model, if the oracle knows each key exactly (no key
    /// with several possible states: a value the compaction filter may still change); the
    /// transactions check their reads against it.
    pub(crate) fn exact(&self) -> Option<Model> {
        let mut m = Model::new();
        for (k, s) in &self.keys {
            match s.as_slice() {
                [Some(v)] => {
                    m.insert(k.clone(), v.clone());
                }
                [None] => {}
                _ => return None,
            }
        }
        Some(m)
    }

    /// The states `key` may be read in.
    pub(crate) fn states(&self, key: &[u8]) -> States {
        self.keys.get(key).cloned().unwrap_or_else(|| vec![None])
    }

    fn set(&mut self, key: &[u8], s: States) {
        if s == [None] {
            self.keys.remove(key);
        } else {
            self.keys.insert(key.to_vec(), s);
        }
    }

    /// Records an acknowledged write.
    pub(crate) fn apply(&mut self, w: &WriteOp) {
        match w {
            WriteOp::Put(k, v) => self.set(k, closure(vec![Some(v.0.clone())])),
            WriteOp::Delete(k) => self.set(k, vec![None]),
            WriteOp::DeleteRange(b, e) => {
                if b < e {
                    let doomed: Vec<Vec<u8>> = self
                        .keys
                        .range::<[u8], _>((Bound::Included(&b[..]), Bound::Excluded(&e[..])))
                        .map(|(k, _)| k.clone())
                        .collect();
                    for k in doomed {
                        self.keys.remove(&k);
                    }
                }
            }
            WriteOp::Merge(k, v) => {
                let s = self
                    .states(k)
                    .into_iter()
                    .map(|st| Some(append_operand(st.as_deref(), v)))
                    .collect();
                self.set(k, closure(s));
            }
        }
    }

    /// True if `key` may be read as `got`.
    pub(crate) fn accepts(&self, key: &[u8], got: Option<&[u8]>) -> bool {
        match self.keys.get(key) {
            Some(s) => s.iter().any(|st| st.as_deref() == got),
            None => got.is_none(),
        }
    }

    /// Panics (saying `ctx`) unless `key` may be read as `got`.
    #[track_caller]
    pub(crate) fn check_get(&self, key: &[u8], got: Option<&[u8]>, ctx: &str) {
        assert!(
            self.accepts(key, got),
            "{ctx}: key {:?} read as {got:?}, the oracle allows {:?}",
            show(key),
            self.states(key)
        );
    }

    /// Checks a scan of `[lower, upper)`: strictly ascending keys, each read as allowed, and
    /// every key left out allowed to be absent.
    pub(crate) fn check_scan(
        &self,
        got: &[(Vec<u8>, Vec<u8>)],
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Result<(), String> {
        let in_range = |k: &[u8]| lower.is_none_or(|l| k >= l) && upper.is_none_or(|u| k < u);
        if let Some(w) = got.windows(2).find(|w| w[0].0 >= w[1].0) {
            return Err(format!("scan not strictly ascending at {:?}", show(&w[1].0)));
        }
        for (k, v) in got {
            if !in_range(k) {
                return Err(format!("scan returned {:?}, outside its bounds", show(k)));
            }
            if !self.accepts(k, Some(v)) {
                return Err(format!(
                    "scan read {:?} as {v:?}, the oracle allows {:?}",
                    show(k),
                    self.states(k)
                ));
            }
        }
        let seen: std::collections::BTreeSet<&[u8]> = got.iter().map(|(k, _)| &k[..]).collect();
        for (k, s) in &self.keys {
            if in_range(k) && !seen.contains(&k[..]) && !s.contains(&None) {
                return Err(format!("scan missed {:?}, which must be one of {s:?}", show(k)));
            }
        }
        Ok(())
    }
}
