//! Tests for the column family fields of MANIFEST edits: golden bytes, the tracker's rules,
//! and what the version set does with families (each family's files and log number loaded and
//! kept apart; a dropped family's files skipped; the largest id kept across a roll; family
//! edits applied, recovered, and refused when they do not apply).

use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::fs::StdFs;
use crate::key::{InternalKey, ValueKind};
use crate::version::current::write_new_manifest;
use crate::version::set::BYTEWISE_COMPARATOR;
use crate::version::{FileMetaData, VersionSet};

fn file(number: u64) -> FileMetaData {
    FileMetaData {
        number,
        file_size: 100,
        smallest: InternalKey::new(b"a", 1, ValueKind::Put),
        largest: InternalKey::new(b"z", 1, ValueKind::Put),
        smallest_seq: 1,
        largest_seq: 1,
        num_entries: 1,
        num_deletions: 0,
        oldest_blob_file_number: 0,
        reader: Default::default(),
    }
}

fn cf(family: u32, add: Option<&str>, drop: bool) -> VersionEdit {
    VersionEdit {
        cf: CfEdit { family, add: add.map(str::to_string), drop, max_column_family: None },
        ..Default::default()
    }
}

/// The bytes `docs/format/manifest.md` shows (version 2).
#[test]
fn cf_fields_golden_bytes() {
    let mut add = cf(1, Some("a"), false);
    add.cf.max_column_family = Some(1);
    let mut out = Vec::new();
    add.encode(&mut out);
    assert_eq!(out, [0xC8, 0x01, 0x01, 0xC9, 0x01, 0x01, b'a', 0xCB, 0x01, 0x01]);
    assert_eq!(VersionEdit::decode(&out, "m", 0).unwrap(), add);
    let mut out = Vec::new();
    cf(1, None, true).encode(&mut out);
    assert_eq!(out, [0xC8, 0x01, 0x01, 0xCA, 0x01]);
    // A plain default edit has none of the fields: version 1 bytes.
    let mut out = Vec::new();
    VersionEdit { log_number: Some(3), ..Default::default() }.encode(&mut out);
    assert_eq!(out, [0x02, 0x03]);
    // Truncated data and a name that is not UTF-8 are corruption.
    for bad in [&[0xC8, 0x01][..], &[0xC9, 0x01, 0x02, b'a'], &[0xC9, 0x01, 0x01, 0xFF]] {
        assert!(VersionEdit::decode(bad, "m", 9).unwrap_err().is_corruption(), "{bad:?}");
    }
}

#[test]
fn tracker_follows_adds_and_drops_and_refuses_nonsense() {
    let mut t = CfTracker::default();
    assert_eq!(t.observe(&cf(0, None, false)), Ok(true));
    assert_eq!(t.observe(&cf(1, Some("a"), false)), Ok(false));
    assert_eq!(t.observe(&cf(2, Some("b"), false)), Ok(false));
    assert_eq!(t.names(), ["default", "a", "b"]);
    assert_eq!(t.observe(&cf(1, None, true)), Ok(false));
    assert_eq!(t.names(), ["default", "b"]);
    // A dropped family's later edits are skipped, not refused.
    assert_eq!(t.observe(&cf(1, None, false)), Ok(false));
    assert_eq!(t.max_column_family(), 2);
    for (bad, why) in [
        (cf(0, Some("x"), false), "added with id 0"),
        (cf(3, Some("default"), false), "added with id 3"),
        (cf(2, Some("b"), false), "added twice"),
        (cf(4, Some("b"), false), "added twice"),
        (cf(0, None, true), "default column family dropped"),
        (cf(1, None, true), "dropped but not live"),
        (cf(7, None, false), "never added"),
    ] {
        let e = t.observe(&bad).unwrap_err();
        assert!(e.contains(why), "{bad:?}: {e}");
    }
}

/// A MANIFEST holding `edits` after a creation edit, named by CURRENT in `dir`.
fn write_manifest(dir: &Path, edits: &[VersionEdit]) {
    let base = VersionEdit {
        comparator: Some(BYTEWISE_COMPARATOR.into()),
        log_number: Some(0),
        next_file_number: Some(20),
        last_sequence: Some(5),
        ..Default::default()
    };
    let records: Vec<Vec<u8>> = std::iter::once(&base)
        .chain(edits)
        .map(|e| {
            let mut r = Vec::new();
            e.encode(&mut r);
            r
        })
        .collect();
    let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    write_new_manifest(&StdFs, dir, 1, &refs).map_err(|f| f.error).unwrap();
}

fn with_files(mut e: VersionEdit, files: &[u64]) -> VersionEdit {
    e.new_files = files.iter().map(|&n| (0, file(n))).collect();
    e
}

#[test]
fn a_live_family_is_listed_and_loaded_apart_from_default() {
    let dir = tempfile::tempdir().unwrap();
    let mut users = with_files(cf(1, None, false), &[6]);
    users.log_number = Some(4);
    write_manifest(
        dir.path(),
        &[with_files(cf(0, None, false), &[5]), cf(1, Some("users"), false), users],
    );
    assert_eq!(list_column_families(&StdFs, dir.path()).unwrap(), ["default", "users"]);
    let vs = VersionSet::load(dir.path(), Arc::new(StdFs), 7).unwrap();
    let numbers =
        |v: &crate::version::Version| v.files[0].iter().map(|f| f.number).collect::<Vec<_>>();
    assert_eq!(numbers(&vs.current()), [5]);
    assert_eq!(numbers(&vs.current_of(1).unwrap()), [6]);
    assert_eq!((vs.log_number_of(0), vs.log_number_of(1), vs.log_number()), (Some(0), Some(4), 0));
    let mut live: Vec<u64> = vs.live_files().into_iter().collect();
    live.sort_unstable();
    assert_eq!(live, [5, 6]);
    // An open that names only `default` refuses, naming the family: `db/open_families.rs`
    // (tests/column_families.rs checks it through `Db::open`).
    // Loading changed nothing: the family is still listed.
    assert_eq!(list_column_families(&StdFs, dir.path()).unwrap(), ["default", "users"]);
}

#[test]
fn a_dropped_familys_files_are_not_live_and_its_id_is_never_reused() {
    let dir = tempfile::tempdir().unwrap();
    write_manifest(
        dir.path(),
        &[
            with_files(cf(0, None, false), &[5]),
            cf(1, Some("gone"), false),
            with_files(cf(1, None, false), &[6]),
            cf(1, None, true),
        ],
    );
    assert_eq!(list_column_families(&StdFs, dir.path()).unwrap(), ["default"]);
    let vs = VersionSet::recover(dir.path(), Arc::new(StdFs), 7).unwrap();
    assert_eq!(vs.live_files().into_iter().collect::<Vec<_>>(), [5]);
    assert_eq!(vs.max_column_family(), 1);
    drop(vs);
    // The new MANIFEST's snapshot edit kept the largest id (tag 203).
    let vs = VersionSet::load(dir.path(), Arc::new(StdFs), 7).unwrap();
    assert_eq!((vs.max_column_family(), vs.manifest_file_number() > 1), (1, true));
}

#[test]
fn family_edits_apply_survive_recovery_and_a_drop_frees_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create(dir.path(), Arc::new(StdFs), 7).unwrap();
    vs.log_and_apply(cf(1, Some("a"), false)).unwrap();
    vs.log_and_apply(cf(2, Some("b"), false)).unwrap();
    let (n5, n6, log) = (vs.new_file_number(), vs.new_file_number(), vs.new_file_number());
    vs.log_and_apply(with_files(cf(0, None, false), &[n5])).unwrap();
    let mut e = with_files(cf(2, None, false), &[n6]);
    e.log_number = Some(log);
    vs.log_and_apply(e).unwrap();
    assert_eq!(list_column_families(&StdFs, dir.path()).unwrap(), ["default", "a", "b"]);
    // The minimum over live families: `a` and `default` have written no log number.
    assert_eq!((vs.log_number(), vs.log_number_of(2)), (0, Some(log)));

    // Edits that do not apply write nothing.
    for bad in [
        cf(0, Some("x"), false),
        cf(3, Some("default"), false),
        cf(3, Some("a"), false),
        cf(2, Some("c"), false),
        cf(9, None, false),
        cf(0, None, true),
        with_files(cf(1, None, true), &[vs.next_file_number() - 1]),
    ] {
        let e = vs.log_and_apply(bad.clone()).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{bad:?}: {e}");
    }
    drop(vs);

    // Recovery rolls the MANIFEST: its snapshot recreates every family with its files.
    let mut vs = VersionSet::recover(dir.path(), Arc::new(StdFs), 7).unwrap();
    let families: Vec<(u32, &str)> =
        vs.families().iter().map(|(&id, f)| (id, f.name.as_str())).collect();
    assert_eq!(families, [(0, "default"), (1, "a"), (2, "b")]);
    assert_eq!(vs.current_of(2).unwrap().files[0][0].number, n6);
    assert_eq!(vs.log_number_of(2), Some(log));
    assert_eq!(vs.max_column_family(), 2);

    // Dropping `b` frees its file once no reader holds its version.
    let held = vs.current_of(2).unwrap();
    vs.log_and_apply(cf(2, None, true)).unwrap();
    assert!(vs.live_files().contains(&n6), "a reader holds it");
    drop(held);
    assert!(!vs.live_files().contains(&n6));
    assert!(vs.current_of(2).is_none());
    // A dropped id is never given again.
    assert!(vs.log_and_apply(cf(2, Some("b"), false)).is_err());
    vs.log_and_apply(cf(3, Some("b"), false)).unwrap();
    drop(vs);
    let vs = VersionSet::load(dir.path(), Arc::new(StdFs), 7).unwrap();
    let names: Vec<&str> = vs.families().values().map(|f| f.name.as_str()).collect();
    assert_eq!((names, vs.max_column_family()), (vec!["default", "a", "b"], 3));
}

#[test]
fn listing_a_missing_database_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let e = list_column_families(&StdFs, &dir.path().join("nope")).unwrap_err();
    assert!(matches!(e, Error::NotFound(_)), "{e}");
}
