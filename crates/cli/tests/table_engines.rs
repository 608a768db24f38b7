//! The table tools on every engine they take (`talus ibench`, `sysbench`, `tpcc` with
//! `--engine=talus|rocksdb|sqlite`): the same seeded work gives equal content checksums on each
//! engine; sizes are the bytes written, never a preallocated length (a one-row database is
//! under a megabyte while open); a directory another engine wrote is refused by name with
//! nothing written; and a build without the `rocksdb` feature answers `--engine=rocksdb` with
//! the feature and the build command. Built with `--features rocksdb`, RocksDB joins every
//! comparison (outside CI: `bench/build_rocksdb_adapter.sh target/rdb /work/rocksdb-tools --
//! test --release -p talus-cli --features rocksdb --test table_engines`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

/// The engines under test: talus-table's storages and SQLite.
fn engines() -> Vec<&'static str> {
    if cfg!(feature = "rocksdb") {
        vec!["talus", "rocksdb", "sqlite"]
    } else {
        vec!["talus", "sqlite"]
    }
}

fn talus(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).output().expect("spawn talus")
}

fn ok(o: &Output, what: &str) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{what}: {out}\n{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn args(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The `check <what> entries=N xxh3=H` lines of a tool's output.
fn checksums(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with("check ") && l.contains(" xxh3="))
        .map(String::from)
        .collect()
}

/// Every file's name and bytes under `dir`.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect()
}

fn ibench_run(engine: &str, db: &Path, extra: &[&str]) -> String {
    let mut a = args(&[
        "ibench",
        &format!("--engine={engine}"),
        &format!("--db={}", db.display()),
        "--steps=l.i0,l.x,l.i1,check",
        "--num=1500",
        "--num_i1=1000",
        "--clients=2",
        "--rows_per_commit=100",
        "--interval=10",
        "--write_buffer_size=262144",
    ]);
    a.extend(args(extra));
    ok(&talus(&a), &format!("ibench {engine}"))
}

#[test]
fn ibench_checksums_are_equal_across_engines_and_follow_the_seed() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen: Vec<(String, Vec<String>)> = Vec::new();
    for (i, e) in engines().into_iter().enumerate() {
        for (mode, extra) in [
            ("own", vec!["--seed=3"]),
            ("shared", vec!["--seed=3", "--shared_table", "--unique_index"]),
        ] {
            let db = dir.path().join(format!("{e}-{mode}"));
            let sums = checksums(&ibench_run(e, &db, &extra));
            let tables = if mode == "own" { 2 } else { 1 };
            assert_eq!(sums.len(), tables * 4, "{e} {mode}: {sums:?}");
            assert!(
                sums.iter().all(|l| l.contains(if mode == "own" {
                    "entries=2500"
                } else {
                    "entries=5000"
                })),
                "{sums:?}"
            );
            if let Some((first, want)) = seen.iter().find(|(m, _)| m.ends_with(mode)) {
                assert_eq!(&sums, want, "{e} {mode} vs {first}");
            } else {
                seen.push((format!("{e} {mode}"), sums));
            }
            if i == 0 && mode == "own" {
                let other = dir.path().join(format!("{e}-seed4"));
                let sums4 = checksums(&ibench_run(e, &other, &["--seed=4"]));
                assert_ne!(sums4, seen[0].1, "another seed, other rows");
            }
        }
    }
}

#[test]
fn sysbench_and_tpcc_checksums_are_equal_across_engines() {
    let dir = tempfile::tempdir().unwrap();
    let mut sb: Option<Vec<String>> = None;
    let mut tp: Option<Vec<String>> = None;
    for e in engines() {
        let db = dir.path().join(format!("sb-{e}"));
        let base = [format!("--engine={e}"), format!("--db={}", db.display()), "--tables=2".into()];
        let mut prep = vec!["sysbench".to_string()];
        prep.extend(base.iter().cloned());
        prep.extend(args(&["--table_size=1500", "--rand_seed=3", "prepare"]));
        ok(&talus(&prep), "sysbench prepare");
        let mut check = vec!["sysbench".to_string()];
        check.extend(base.iter().cloned());
        check.push("check".into());
        let sums = checksums(&ok(&talus(&check), "sysbench check"));
        assert_eq!(sums.len(), 4, "{sums:?}");
        match &sb {
            None => sb = Some(sums),
            Some(want) => assert_eq!(&sums, want, "sysbench {e}"),
        }
        let db = dir.path().join(format!("tp-{e}"));
        let tpcc = |cmd: &str| {
            args(&[
                "tpcc",
                &format!("--engine={e}"),
                &format!("--db={}", db.display()),
                "--warehouses=1",
                "--items=1000",
                "--customers=30",
                "--rand_seed=5",
                cmd,
            ])
        };
        ok(&talus(&tpcc("prepare")), "tpcc prepare");
        let sums = checksums(&ok(&talus(&tpcc("check")), "tpcc check"));
        assert!(sums.len() >= 9, "{sums:?}");
        match &tp {
            None => tp = Some(sums),
            Some(want) => assert_eq!(&sums, want, "tpcc {e}"),
        }
    }
}

/// The number right after `key` in `text` (`db_MB=0.3`).
fn number_after(text: &str, key: &str) -> f64 {
    let at = text.find(key).unwrap_or_else(|| panic!("no {key:?} in {text}")) + key.len();
    let num: String = text[at..].chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    num.parse().unwrap_or_else(|_| panic!("{key:?} in {text}"))
}

/// The number right before `key` in `text` (`2048 bytes on disk`).
fn number_before(text: &str, key: &str) -> f64 {
    let at = text.find(key).unwrap_or_else(|| panic!("no {key:?} in {text}"));
    let rev: String =
        text[..at].chars().rev().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let num: String = rev.chars().rev().collect();
    num.parse().unwrap_or_else(|_| panic!("{key:?} in {text}"))
}

#[test]
fn sizes_are_the_bytes_written_not_preallocated() {
    let dir = tempfile::tempdir().unwrap();
    for e in engines() {
        // One row: the database is well under a megabyte while open.
        let db = dir.path().join(format!("ib1-{e}"));
        let a = args(&[
            "ibench",
            &format!("--engine={e}"),
            &format!("--db={}", db.display()),
            "--steps=l.i0",
            "--num=1",
        ]);
        let out = ok(&talus(&a), "ibench one row");
        let mb = number_after(&out, "db_MB=");
        assert!(mb < 1.0, "{e}: one row takes {mb} MB:\n{out}");
        // sysbench's and tpcc's printed sizes against the files once the tool closed them.
        let db = dir.path().join(format!("sb-{e}"));
        let a = args(&[
            "sysbench",
            &format!("--engine={e}"),
            &format!("--db={}", db.display()),
            "--tables=1",
            "--table_size=2000",
            "prepare",
        ]);
        let out = ok(&talus(&a), "sysbench prepare");
        let printed = number_before(&out, " bytes on disk");
        let files = du(&db);
        assert!(
            printed < 2.0 * files + 65536.0 && files < 2.0 * printed + 65536.0,
            "{e}: printed {printed}, files {files}:\n{out}"
        );
        let db = dir.path().join(format!("tp-{e}"));
        let a = args(&[
            "tpcc",
            &format!("--engine={e}"),
            &format!("--db={}", db.display()),
            "--warehouses=1",
            "--items=1000",
            "--customers=30",
            "prepare",
        ]);
        let out = ok(&talus(&a), "tpcc prepare");
        let printed = number_before(&out, " MiB on disk") * 1048576.0;
        let files = du(&db);
        assert!(
            printed < 2.0 * files + 65536.0 && files < 2.0 * printed + 65536.0,
            "{e}: printed {printed}, files {files}:\n{out}"
        );
    }
}

/// `du --apparent-size` of `dir` without SQLite's shared-memory index, bytes.
fn du(dir: &Path) -> f64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let m = e.metadata().unwrap();
        if m.is_dir() {
            total += du(&e.path()) as u64;
        } else if !e.file_name().to_string_lossy().ends_with("-shm") {
            total += m.len();
        }
    }
    total as f64
}

/// A directory whose newest OPTIONS file says RocksDB wrote it (RocksDB's own header).
fn rocksdb_looking_dir(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("CURRENT"), "MANIFEST-000005\n").unwrap();
    std::fs::write(dir.join("MANIFEST-000005"), b"\x00rocksdb manifest bytes").unwrap();
    std::fs::write(dir.join("IDENTITY"), "d0c5c4b6-rocksdb\n").unwrap();
    std::fs::write(
        dir.join("OPTIONS-000007"),
        "# This is a RocksDB option file.\n[Version]\n  rocksdb_version=10.4.2\n  \
         options_file_version=1.1\n\n[DBOptions]\n  create_if_missing=true\n",
    )
    .unwrap();
}

#[test]
fn another_engines_directory_is_refused_by_name_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    rocksdb_looking_dir(&db);
    let before = snapshot(&db);
    let d = format!("--db={}", db.display());
    for a in [
        args(&["ibench", "--engine=talus", &d, "--steps=l.i1", "--num_i1=10"]),
        args(&["sysbench", "--engine=talus", &d, "--tables=1", "--time=1", "point-query", "run"]),
        args(&["tpcc", "--engine=talus", &d, "--warehouses=1", "check"]),
    ] {
        let o = talus(&a);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!o.status.success(), "{a:?} ran on a RocksDB directory");
        assert!(
            err.contains("is a rocksdb database") && err.contains("--engine=rocksdb"),
            "{a:?}: {err}"
        );
        assert_eq!(snapshot(&db), before, "{a:?} wrote into the directory");
    }
}

#[cfg(not(feature = "rocksdb"))]
#[test]
fn engine_rocksdb_without_the_feature_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let d = format!("--db={}", db.display());
    for a in [
        args(&["ibench", "--engine=rocksdb", &d]),
        args(&["sysbench", "--engine=rocksdb", &d, "prepare"]),
        args(&["tpcc", "--engine=rocksdb", &d, "prepare"]),
    ] {
        let o = talus(&a);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!o.status.success(), "{a:?}");
        assert!(
            err.contains("`rocksdb` cargo feature") && err.contains("--features rocksdb"),
            "{a:?}: {err}"
        );
        assert!(!db.exists(), "{a:?} created the database");
    }
}

#[cfg(feature = "rocksdb")]
#[test]
fn a_talus_directory_opened_as_rocksdb_is_refused_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let d = format!("--db={}", db.display());
    ok(&talus(&args(&["ibench", "--engine=talus", &d, "--steps=l.i0", "--num=10"])), "talus");
    let before = snapshot(&db);
    for a in [
        args(&["ibench", "--engine=rocksdb", &d, "--steps=l.i1", "--num_i1=10"]),
        args(&["sysbench", "--engine=rocksdb", &d, "--tables=1", "--time=1", "point-query", "run"]),
        args(&["tpcc", "--engine=rocksdb", &d, "--warehouses=1", "check"]),
    ] {
        let o = talus(&a);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!o.status.success(), "{a:?} ran on a Talus directory");
        assert!(
            err.contains("is a talus database") && err.contains("--engine=talus"),
            "{a:?}: {err}"
        );
        assert_eq!(snapshot(&db), before, "{a:?} wrote into the directory");
    }
}
