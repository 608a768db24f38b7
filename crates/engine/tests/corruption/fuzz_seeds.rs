//! Not run by default (`#[ignore]`): writes the fuzzers' seed files, small pristine SSTs in each
//! table format and a WAL, from a database built like the fixture.

use std::path::PathBuf;

use talus::{Db, Options};

use crate::common::{Model, WriteOp};
use crate::fixture::{apply_all, key, options, put, unpartitioned, value};

/// Writes the fuzzers' seed files to `$FUZZ_SEEDS_DIR`: `FUZZ_SEEDS_DIR=fuzz/seeds cargo test
/// --release -p talus --test corruption write_fuzz_seeds -- --ignored` (for `sst_open_scan` an
/// SST with a range tombstone in format version 2 (crc32c), the same data as a partitioned
/// version-3 table, `partitioned-*.sst`, and as a version-4 table (XXH3, the default),
/// `xxh3-*.sst`; a WAL for `wal_replay`).
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let out = PathBuf::from(std::env::var_os("FUZZ_SEEDS_DIR").expect("FUZZ_SEEDS_DIR"));
    let crc = talus::ChecksumType::Crc32c;
    for (prefix, opts) in [
        ("", Options { checksum: crc, ..unpartitioned(Default::default()) }),
        (
            "partitioned-",
            Options { metadata_block_size: 32, checksum: crc, ..options(Default::default()) },
        ),
        ("xxh3-", unpartitioned(Default::default())),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(dir.path(), Options { create_if_missing: true, ..opts }).expect("open");
        let mut m = Model::new();
        for i in 0..24 {
            apply_all(&db, &mut m, &[put(i, value(i, 1, i % 9))]);
        }
        apply_all(&db, &mut m, &[WriteOp::DeleteRange(key(3).into(), key(6).into())]);
        apply_all(&db, &mut m, &[WriteOp::Delete(key(9).into())]);
        db.flush().expect("flush");
        for i in 0..6 {
            apply_all(&db, &mut m, &[put(i, value(i, 2, 3)), WriteOp::Delete(key(i + 10).into())]);
        }
        drop(db);
        for e in std::fs::read_dir(dir.path()).expect("read dir") {
            let p = e.expect("entry").path();
            let target = match p.extension().and_then(|e| e.to_str()) {
                Some("sst") => "sst_open_scan",
                Some("log")
                    if prefix.is_empty() && std::fs::metadata(&p).is_ok_and(|m| m.len() > 0) =>
                {
                    "wal_replay"
                }
                _ => continue,
            };
            let to = out.join(target);
            std::fs::create_dir_all(&to).expect("mkdir");
            let name = format!("{prefix}{}", p.file_name().expect("name").to_string_lossy());
            std::fs::copy(&p, to.join(name)).expect("copy");
        }
    }
}
