//! A database holding tables of both block checksums: crc32c ones (format version 2, or 3 with
//! a partitioned index and filters: written with `checksum = crc32c`, as every table before
//! version 4) and XXH3 ones (version 4, the default). Every key reads as a `BTreeMap` model
//! says, whatever the option says at open, across reopen, flush, ingestion of an external
//! crc32c file and a full compaction (which rewrites everything as version 4).

use std::collections::BTreeMap;
use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus::sst::format::{Footer, FOOTER_LEN};
use talus::{ChecksumType, Db, IndexType, IngestOptions, Options, SstFileWriter};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// How many table files of `dir` carry each footer format version.
fn versions(dir: &Path) -> BTreeMap<u32, usize> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "sst") {
            let bytes = std::fs::read(&p).unwrap();
            let f = Footer::decode(&bytes[bytes.len() - FOOTER_LEN..], "t", 0).unwrap();
            *out.entry(f.version).or_default() += 1;
        }
    }
    out
}

/// `n` random puts (one in ten a delete) over 4000 keys, into `db` and `model`, then a flush.
fn write(db: &Db, model: &mut Model, rng: &mut StdRng, tag: &str, n: usize) {
    for _ in 0..n {
        let k = format!("k{:05}", rng.gen_range(0..4000)).into_bytes();
        if rng.gen_bool(0.1) {
            db.delete(&k).unwrap();
            model.remove(&k);
        } else {
            let v = format!("{tag}-{}", "v".repeat(rng.gen_range(0..60))).into_bytes();
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
    }
    db.flush().unwrap();
}

fn check(db: &Db, model: &Model, when: &str) {
    let got: Model = db.iter(&Default::default()).map(|r| r.unwrap()).collect();
    assert!(got == *model, "{when}: scan differs from the model");
    for i in 0..4000 {
        let k = format!("k{i:05}").into_bytes();
        assert_eq!(db.get(&k).unwrap(), model.get(&k).cloned(), "{when}: k{i:05}");
    }
    for k in model.keys().filter(|k| k.starts_with(b"x")) {
        assert_eq!(db.get(k).unwrap().as_ref(), model.get(k), "{when}: {k:?}");
    }
}

#[test]
fn a_database_of_crc32c_and_xxh3_tables_reads_every_key() {
    for partitioned in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let ext = tempfile::tempdir().unwrap();
        let xxh3 = Options {
            create_if_missing: true,
            write_buffer_size: 64 << 10,
            disable_auto_compactions: true,
            index_type: if partitioned {
                IndexType::TwoLevelIndexSearch
            } else {
                IndexType::BinarySearch
            },
            partition_filters: partitioned,
            metadata_block_size: 256,
            ..Default::default()
        };
        assert_eq!(xxh3.checksum, ChecksumType::Xxh3, "the default");
        let crc = Options { checksum: ChecksumType::Crc32c, ..xxh3.clone() };
        let crc_version = if partitioned { 3 } else { 2 };
        let mut rng = StdRng::seed_from_u64(u64::from(partitioned));
        let mut model = Model::new();
        let case = |s: &str| format!("partitioned {partitioned}: {s}");

        // Tables as every release before version 4 wrote them.
        {
            let db = Db::open(dir.path(), crc.clone()).unwrap();
            for round in 0..3 {
                write(&db, &mut model, &mut rng, &format!("crc{round}"), 1500);
            }
            check(&db, &model, &case("crc32c tables"));
        }
        let v = versions(dir.path());
        assert_eq!(v.keys().copied().collect::<Vec<_>>(), vec![crc_version], "{v:?}");

        // Reopened with the default: new tables are version 4, the old ones still read.
        let db = Db::open(dir.path(), xxh3.clone()).unwrap();
        check(&db, &model, &case("crc32c tables, opened with xxh3"));
        for round in 0..3 {
            write(&db, &mut model, &mut rng, &format!("xxh{round}"), 1500);
        }
        // An external crc32c file past every key is installed as written.
        let sst = ext.path().join("ext.sst");
        let mut w = SstFileWriter::open(&sst, &crc).unwrap();
        for i in 0..300u32 {
            let (k, v) = (format!("x{i:04}").into_bytes(), format!("ext{i}").into_bytes());
            w.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        w.finish().unwrap();
        db.ingest_external_file(&[&sst], &IngestOptions::default()).unwrap();
        let v = versions(dir.path());
        assert!(v.get(&crc_version).is_some_and(|&n| n >= 4) && v.get(&4) >= Some(&3), "{v:?}");
        check(&db, &model, &case("both kinds"));
        drop(db);

        // Reopened with crc32c: the XXH3 tables still read (the footer decides).
        let db = Db::open(dir.path(), crc.clone()).unwrap();
        check(&db, &model, &case("both kinds, opened with crc32c"));
        drop(db);

        // A full compaction under the default rewrites the flushed tables as version 4 (the
        // ingested file, alone at the bottom with nothing overlapping it, may stay as written).
        let db = Db::open(dir.path(), xxh3.clone()).unwrap();
        write(&db, &mut model, &mut rng, "last", 500);
        db.compact_range(None, None).unwrap();
        let v = versions(dir.path());
        assert!(v.contains_key(&4) && v.get(&crc_version) <= Some(&1), "{v:?}");
        assert!(v.keys().all(|&k| k == 4 || k == crc_version), "{v:?}");
        check(&db, &model, &case("compacted"));
        drop(db);
        let db = Db::open(dir.path(), xxh3).unwrap();
        check(&db, &model, &case("compacted, reopened"));
    }
}
