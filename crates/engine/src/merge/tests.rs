use super::resolve::{full_merge, full_merge_in_job, partial_merge_in_job, Operands};
use super::*;
use crate::error::Error;

fn ops(newest_first: &[&[u8]]) -> Operands {
    let mut o = Operands::default();
    for v in newest_first {
        o.push(v);
    }
    o
}

#[test]
fn operands_keep_order_and_reuse_the_buffer() {
    let mut o = ops(&[b"c", b"", b"ab"]);
    assert_eq!(o.len(), 3);
    assert_eq!(o.get(0), b"c");
    assert_eq!(o.get(1), b"");
    assert_eq!(o.get(2), b"ab");
    assert_eq!(o.oldest_first().as_slice(), &[&b"ab"[..], b"", b"c"]);
    o.clear();
    assert!(o.is_empty());
    o.push(b"x");
    assert_eq!(o.oldest_first().as_slice(), &[&b"x"[..]]);
}

#[test]
fn builtins_by_name_and_nickname() {
    for (name, nick) in BUILTIN_NAMES {
        assert_eq!(builtin_by_name(name).unwrap().name(), *name);
        assert_eq!(builtin_by_name(nick).unwrap().name(), *name);
    }
    assert_eq!(builtin_by_name("put_v1").unwrap().name(), "PutOperator");
}

#[test]
fn uint64add_sums_wrapping_and_reads_bad_lengths_as_zero() {
    let op = UInt64AddOperator;
    let max = u64::MAX.to_le_bytes();
    let one = 1u64.to_le_bytes();
    assert_eq!(op.full_merge(b"k", Some(&max), &[&one]).unwrap(), 0u64.to_le_bytes());
    assert_eq!(op.full_merge(b"k", Some(b"bad"), &[&one, &one]).unwrap(), 2u64.to_le_bytes());
    assert_eq!(op.partial_merge_multi(b"k", &[&one, &one, b"x"]).unwrap(), 2u64.to_le_bytes());
}

#[test]
fn string_append_partial_merges_agree_with_full_merges() {
    let op = StringAppendOperator::new("--");
    let parts: [&[u8]; 3] = [b"a", b"", b"c"];
    let partial = op.partial_merge_multi(b"k", &parts).unwrap();
    assert_eq!(partial, b"a----c");
    assert_eq!(
        op.full_merge(b"k", Some(b"x"), &[&partial]).unwrap(),
        op.full_merge(b"k", Some(b"x"), &parts).unwrap()
    );
    let test_op = StringAppendTestOperator(StringAppendOperator::new(","));
    assert_eq!(test_op.partial_merge_multi(b"k", &parts), None);
    assert_eq!(test_op.full_merge(b"k", None, &parts).unwrap(), b"a,,c");
}

#[test]
fn put_and_max() {
    assert_eq!(PutOperator.full_merge(b"k", Some(b"z"), &[b"a", b"b"]).unwrap(), b"b");
    assert_eq!(MaxOperator.full_merge(b"k", Some(b"b"), &[b"a", b"c", b"b"]).unwrap(), b"c");
    assert_eq!(MaxOperator.full_merge(b"k", Some(b"z"), &[b"a"]).unwrap(), b"z");
}

struct Failing(MergeFailureScope);

impl MergeOperator for Failing {
    fn name(&self) -> &str {
        "Failing"
    }
    fn full_merge(&self, _: &[u8], _: Option<&[u8]>, _: &[&[u8]]) -> Result<Vec<u8>, MergeError> {
        Err(MergeError { message: "no".into(), scope: self.0 })
    }
}

struct Panicking;

impl MergeOperator for Panicking {
    fn name(&self) -> &str {
        "Panicking"
    }
    fn full_merge(&self, _: &[u8], _: Option<&[u8]>, _: &[&[u8]]) -> Result<Vec<u8>, MergeError> {
        panic!("operator bug")
    }
    fn partial_merge_multi(&self, _: &[u8], _: &[&[u8]]) -> Option<Vec<u8>> {
        panic!("partial bug")
    }
}

#[test]
fn failures_are_corruption_or_kept_operands_never_values() {
    let o = ops(&[b"1", b"2"]);
    // Reads: corruption naming the operator and the key, whatever the scope.
    for scope in [MergeFailureScope::TryMerge, MergeFailureScope::MustMerge] {
        let e = full_merge(Some(&Failing(scope)), b"key", None, &o).unwrap_err();
        assert!(e.is_corruption(), "{e}");
        assert!(e.to_string().contains("Failing") && e.to_string().contains("key"), "{e}");
    }
    let e = full_merge(Some(&Panicking), b"key", Some(b"b"), &o).unwrap_err();
    assert!(e.to_string().contains("operator bug"), "{e}");
    assert!(matches!(full_merge(None, b"key", None, &o), Err(Error::InvalidArgument(_))));
    // Jobs: TryMerge and panics fail the job; MustMerge and no operator keep the operands.
    let job = |op: Option<&dyn MergeOperator>| full_merge_in_job(op, b"key", None, &o);
    assert!(job(Some(&Failing(MergeFailureScope::TryMerge))).unwrap_err().is_corruption());
    assert_eq!(job(Some(&Failing(MergeFailureScope::MustMerge))).unwrap(), None);
    assert!(job(Some(&Panicking)).unwrap_err().is_corruption());
    assert_eq!(job(None).unwrap(), None);
    assert!(partial_merge_in_job(Some(&Panicking), b"key", &o).unwrap_err().is_corruption());
    assert_eq!(
        partial_merge_in_job(Some(&Failing(MergeFailureScope::TryMerge)), b"k", &o).unwrap(),
        None
    );
    assert_eq!(partial_merge_in_job(Some(&UInt64AddOperator), b"k", &ops(&[b"1"])).unwrap(), None);
}
