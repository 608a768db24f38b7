//! Each column family has its own `num_levels` (RocksDB's rule): families of 4 and 7 levels
//! beside a `default` of 5 compact into their own last level, keep their levels across
//! reopens, may grow but not shrink below a level holding files, and a family created at run
//! time with 3 levels compacts into its level 2.

use std::collections::BTreeMap;

use talus::{ColumnFamily, ColumnFamilyDescriptor, Db, Error, Options, ReadOptions};

fn opts(levels: usize) -> Options {
    Options {
        create_if_missing: true,
        create_missing_column_families: true,
        num_levels: levels,
        write_buffer_size: 32 << 10,
        target_file_size_base: 32 << 10,
        max_bytes_for_level_base: 64 << 10,
        level0_file_num_compaction_trigger: 2,
        ..Default::default()
    }
}

fn descs(four: usize, seven: usize) -> Vec<ColumnFamilyDescriptor> {
    vec![
        ColumnFamilyDescriptor::new("four", opts(four)),
        ColumnFamilyDescriptor::new("seven", opts(seven)),
    ]
}

fn all(db: &Db, cf: &ColumnFamily) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.iter_cf(cf, &ReadOptions::default()).unwrap().map(|kv| kv.unwrap()).collect()
}

/// The number of files of `cf` at each of its levels (the property answers `None` past its
/// last level).
fn files_per_level(db: &Db, cf: &ColumnFamily) -> Vec<u64> {
    (0..).map_while(|l| db.property_int_cf(cf, &format!("talus.num-files-at-level{l}"))).collect()
}

/// Writes `n` keys of 200 bytes into `cf`, tagged `tag`.
fn fill(db: &Db, cf: &ColumnFamily, n: u32, tag: u8) {
    for i in 0..n {
        db.put_cf(cf, format!("k{i:06}"), [tag; 200]).unwrap();
    }
}

#[test]
fn families_have_their_own_level_counts() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_cf(dir.path(), opts(5), descs(4, 7)).unwrap();
    let (four, seven) = (db.cf_handle("four").unwrap(), db.cf_handle("seven").unwrap());
    let dflt = db.default_column_family();
    for (cf, tag) in [(&dflt, 1), (&four, 2), (&seven, 3)] {
        fill(&db, cf, 3000, tag);
        // Automatic compactions ran while writing: L0 holds fewer files than were flushed.
        db.compact_range_cf(cf, None, None).unwrap();
    }
    let shape = |db: &Db, cf: &ColumnFamily| {
        let f = files_per_level(db, cf);
        (f.len(), f.iter().rposition(|&n| n > 0))
    };
    // Everything in each family's own last level (dynamic level bytes, RocksDB's default).
    assert_eq!(shape(&db, &dflt), (5, Some(4)));
    assert_eq!(shape(&db, &four), (4, Some(3)));
    assert_eq!(shape(&db, &seven), (7, Some(6)));
    // Overwrites compact through each family's levels again.
    fill(&db, &four, 3000, 4);
    fill(&db, &seven, 3000, 5);
    db.compact_range_cf(&four, None, None).unwrap();
    db.compact_range_cf(&seven, None, None).unwrap();
    assert_eq!(shape(&db, &four), (4, Some(3)));
    assert_eq!(shape(&db, &seven), (7, Some(6)));
    let want = [all(&db, &dflt), all(&db, &four), all(&db, &seven)];
    assert!(want[1].values().all(|v| v[0] == 4) && want[2].values().all(|v| v[0] == 5));
    drop((four, seven, dflt));
    drop(db);

    // The level counts are the options' at each open: the same again...
    let db = Db::open_cf(dir.path(), opts(5), descs(4, 7)).unwrap();
    let (four, seven) = (db.cf_handle("four").unwrap(), db.cf_handle("seven").unwrap());
    assert_eq!(shape(&db, &four), (4, Some(3)));
    assert_eq!(shape(&db, &seven), (7, Some(6)));
    assert_eq!([all(&db, &db.default_column_family()), all(&db, &four), all(&db, &seven)], want);
    drop((four, seven));
    drop(db);
    // ...fewer than a level holding files is refused, changing nothing...
    match Db::open_cf(dir.path(), opts(5), descs(4, 4)) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("level 6"), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    match Db::open_cf(dir.path(), opts(3), descs(4, 7)) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("\"default\""), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    // ...a read-only open of a subset leaves the unnamed family as the MANIFEST has it...
    let ro = Db::open_cf_read_only(dir.path(), opts(5), descs(4, 7).into_iter().take(1)).unwrap();
    assert_eq!(all(&ro, &ro.cf_handle("four").unwrap()), want[1]);
    drop(ro);
    // ...and more levels are taken: a compaction then goes to the new last level.
    let db = Db::open_cf(dir.path(), opts(5), descs(6, 7)).unwrap();
    let four = db.cf_handle("four").unwrap();
    assert_eq!(shape(&db, &four), (6, Some(3)));
    fill(&db, &four, 100, 6);
    db.compact_range_cf(&four, None, None).unwrap();
    assert_eq!(shape(&db, &four), (6, Some(5)));

    // A family created at run time with 3 levels.
    let three = db.create_column_family("three", &opts(3)).unwrap();
    fill(&db, &three, 3000, 7);
    db.compact_range_cf(&three, None, None).unwrap();
    assert_eq!(shape(&db, &three), (3, Some(2)));
    assert_eq!(all(&db, &three).len(), 3000);
    drop((four, three));
    drop(db);
    let mut d = descs(6, 7);
    d.push(ColumnFamilyDescriptor::new("three", opts(3)));
    let db = Db::open_cf(dir.path(), opts(5), d).unwrap();
    let three = db.cf_handle("three").unwrap();
    assert_eq!(shape(&db, &three), (3, Some(2)));
    assert!(all(&db, &three).values().all(|v| v[0] == 7));
}
