//! `talus ldb` on bad input and damaged databases: it refuses what RocksDB's ldb refuses, warns
//! about what recovery dropped, and a failing command changes nothing.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn talus(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn talus");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    feeder.join().expect("feeder");
    out
}

fn ldb(db: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let flag = format!("--db={}", db.display());
    let mut all = vec!["ldb", flag.as_str()];
    all.extend_from_slice(args);
    talus(&all, stdin)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every file of `dir` with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect()
}

fn load(db: &Path, n: usize, extra: &[&str]) {
    let input: String = (0..n).map(|i| format!("key{i:05} ==> value{i}\n")).collect();
    let mut args = vec!["load", "--create_if_missing"];
    args.extend_from_slice(extra);
    let out = ldb(db, &args, input.as_bytes());
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// Regression: `ldb deleterange` with begin > end said OK; RocksDB's ldb fails.
#[test]
fn deleterange_with_begin_after_end_fails_like_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    load(&db, 10, &[]);
    let before = files(&db);
    let out = ldb(&db, &["deleterange", "key00009", "key00001"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "Failed: Invalid argument: end key comes before start key\n");
    assert!(files(&db) == before, "the refused command opened the database");
    let out = ldb(&db, &["deleterange", "key00003", "key00003"], b"");
    assert!(out.status.success(), "an empty range is fine: {}", text(&out.stderr));
}

/// Regression: `manifest_dump` of a zeroed MANIFEST exited 0 with "edits 0".
#[test]
fn manifest_dump_of_a_zeroed_manifest_fails() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    load(&db, 10, &[]);
    let manifest = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("MANIFEST-"))
        .unwrap();
    let len = std::fs::metadata(&manifest).unwrap().len() as usize;
    std::fs::write(&manifest, vec![0u8; len]).unwrap();
    let out = ldb(&db, &["manifest_dump"], b"");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("no version edit"), "{}", text(&out.stderr));
    let out = talus(&["ldb", "manifest_dump", &format!("--path={}", manifest.display())], b"");
    assert_eq!(out.status.code(), Some(1));
}

/// Regression: each failed `ldb scan` on a database with a truncated SST left another
/// `MANIFEST-0000NN`. Now a read command writes nothing, and a write command whose open fails
/// changes nothing either.
#[test]
fn failing_commands_on_a_damaged_database_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    load(&db, 2000, &["--compact"]);
    let sst = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sst"))
        .expect("an SST");
    let len = std::fs::metadata(&sst).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&sst).unwrap().set_len(len / 2).unwrap();
    let before = files(&db);
    for args in [
        &["scan"][..],
        &["get", "key00001"],
        &["checkconsistency"],
        &["put", "k", "v"],
        &["compact"],
    ] {
        let out = ldb(&db, args, b"");
        assert!(!out.status.success(), "{args:?} succeeded on a truncated SST");
        assert!(text(&out.stderr).contains("Corruption"), "{args:?}: {}", text(&out.stderr));
        assert!(files(&db) == before, "{args:?} changed the database");
    }
}

/// Regression: a WAL damaged in the middle lost its tail silently (under the default mode), the
/// damaged WAL was deleted, and `scan`/`checkconsistency` said OK.
#[test]
fn a_damaged_wal_is_reported_by_every_command_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    load(&db, 10, &[]);
    // Unflushed: 6000 keys in 6 batches of 1000, in one WAL.
    let input: String = (0..6000).map(|i| format!("wal{i:05} ==> {}\n", "v".repeat(20))).collect();
    let out = ldb(&db, &["load"], input.as_bytes());
    assert!(out.status.success());
    let wal = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let mut bytes = std::fs::read(&wal).unwrap();
    bytes[40_000] ^= 0x10;
    std::fs::write(&wal, &bytes).unwrap();

    // Read commands: the warning, the file untouched.
    let before = files(&db);
    for args in [&["get", "key00001"][..], &["scan"], &["dump", "--count_only"]] {
        let out = ldb(&db, args, b"");
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(err.starts_with("Warning: WAL recovery (kPointInTimeRecovery) dropped"), "{err}");
        assert!(err.contains("operations") && err.contains("damaged at offset"), "{err}");
        assert!(files(&db) == before, "{args:?} changed the database");
    }
    let out = ldb(&db, &["checkconsistency"], b"");
    assert_eq!(out.status.code(), Some(1), "checkconsistency must fail: {}", text(&out.stdout));
    // kAbsoluteConsistency makes it an error.
    let out = ldb(&db, &["get", "key00001", "--wal_recovery_mode=kAbsoluteConsistency"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("Corruption"), "{}", text(&out.stderr));
    let out = ldb(&db, &["get", "key00001", "--wal_recovery_mode=bogus"], b"");
    assert!(text(&out.stderr).contains("wal_recovery_mode"), "{}", text(&out.stderr));
    assert!(files(&db) == before);

    // A write command recovers at the damage, keeps the WAL, and says so once.
    let out = ldb(&db, &["put", "after", "damage"], b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let name = wal.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        text(&out.stderr).contains(&format!("kept as {name}.corrupt")),
        "{}",
        text(&out.stderr)
    );
    let kept = db.join(format!("{name}.corrupt"));
    assert_eq!(std::fs::read(&kept).unwrap(), bytes, "the damaged WAL is kept byte for byte");
    let out = ldb(&db, &["get", "after"], b"");
    assert!(out.status.success() && out.stderr.is_empty(), "{}", text(&out.stderr));
    let out = ldb(&db, &["checkconsistency"], b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(".corrupt is a WAL"), "{}", text(&out.stderr));
}

#[test]
fn a_file_as_the_database_is_not_a_directory_and_version_prints() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    for args in [&["get", "k"][..], &["put", "k", "v", "--create_if_missing"]] {
        let out = ldb(&file, args, b"");
        assert!(text(&out.stderr).contains("not a directory"), "{}", text(&out.stderr));
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
    let out = talus(&["--version"], b"");
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), format!("talus {}\n", env!("CARGO_PKG_VERSION")));
}

/// A database made by RocksDB's own `ldb` (Debian's rocksdb-tools, if installed) is refused by
/// every command, saying what it is, and left exactly as it was (its LOG included).
#[test]
fn a_rocksdb_database_is_refused_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rocks");
    let made = Command::new("ldb")
        .args([&format!("--db={}", db.display()), "--create_if_missing", "put", "a", "b"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        println!("skipped: RocksDB's ldb is not installed (apt-get install rocksdb-tools)");
        return;
    }
    let before = files(&db);
    let d = format!("--db={}", db.display());
    for args in [
        &["ldb", &d, "get", "a"][..],
        &["ldb", &d, "scan"],
        &["ldb", &d, "put", "x", "y"],
        &["ldb", &d, "checkconsistency"],
        &["db_bench", &d, "--benchmarks=fillseq", "--num=10"],
        &["db_bench", &d, "--use_existing_db", "--benchmarks=readrandom", "--num=10"],
    ] {
        let out = talus(args, b"");
        assert!(!out.status.success(), "{args:?} succeeded on a RocksDB database");
        assert!(text(&out.stderr).contains("RocksDB database"), "{args:?}: {}", text(&out.stderr));
        assert!(files(&db) == before, "{args:?} changed the RocksDB database");
    }
}
