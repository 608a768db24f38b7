//! `talus ldb` end to end: the built binary on temp directories.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use rand::{Rng, SeedableRng};

/// Runs `talus` with `args`, feeding `stdin`.
fn talus(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn talus");
    // Feed stdin from a thread so a child that writes before it finishes reading cannot
    // deadlock against us; a child that exits early just closes the pipe.
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for talus");
    feeder.join().expect("stdin feeder");
    out
}

/// Runs `talus ldb --db=<db> args...`, asserting success; returns stdout.
fn ldb_ok(db: &Path, args: &[&str]) -> Vec<u8> {
    ldb_ok_in(db, args, b"")
}

fn ldb_ok_in(db: &Path, args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let out = ldb(db, args, stdin);
    assert!(
        out.status.success(),
        "ldb {args:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn ldb(db: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let db_flag = format!("--db={}", db.display());
    let mut all = vec!["ldb", db_flag.as_str()];
    all.extend_from_slice(args);
    talus(&all, stdin)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn put_get_scan_dump_delete() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    assert_eq!(text(&ldb_ok(&db, &["put", "a", "1", "--create_if_missing"])), "OK\n");
    // Flags may come before the command too.
    assert_eq!(text(&ldb_ok(&db, &["put", "b b", "x y"])), "OK\n");
    assert_eq!(text(&ldb_ok(&db, &["--hex", "put", "0x0102", "0xFF00"])), "OK\n");
    assert_eq!(text(&ldb_ok(&db, &["put", "c", "3"])), "OK\n");
    assert_eq!(text(&ldb_ok(&db, &["get", "a"])), "1\n");
    assert!(!ldb(&db, &["get", "a", "--hex"], b"").status.success(), "a is not hex");
    assert_eq!(text(&ldb_ok(&db, &["get", "0x61", "--hex"])), "0x31\n");
    assert_eq!(text(&ldb_ok(&db, &["get", "0x61", "--key_hex"])), "1\n");
    assert_eq!(text(&ldb_ok(&db, &["get", "a", "--value_hex"])), "0x31\n");
    assert_eq!(ldb_ok(&db, &["scan"]), b"\x01\x02 : \xff\x00\na : 1\nb b : x y\nc : 3\n");
    assert_eq!(
        text(&ldb_ok(&db, &["scan", "--hex"])),
        "0x0102 : 0xFF00\n0x61 : 0x31\n0x622062 : 0x782079\n0x63 : 0x33\n"
    );
    assert_eq!(text(&ldb_ok(&db, &["scan", "--from=a", "--to=c"])), "a : 1\nb b : x y\n");
    assert_eq!(text(&ldb_ok(&db, &["scan", "--from=a", "--max_keys=1"])), "a : 1\n");
    assert_eq!(
        text(&ldb_ok(&db, &["dump", "--from=a"])),
        "a ==> 1\nb b ==> x y\nc ==> 3\nKeys in range: 3\n"
    );
    assert_eq!(text(&ldb_ok(&db, &["dump", "--count_only"])), "Keys in range: 4\n");
    assert_eq!(text(&ldb_ok(&db, &["delete", "c"])), "OK\n");
    assert_eq!(text(&ldb_ok(&db, &["deleterange", "a", "b b"])), "OK\n");
    assert_eq!(
        text(&ldb_ok(&db, &["dump", "--hex"])),
        "0x0102 ==> 0xFF00\n0x622062 ==> 0x782079\nKeys in range: 2\n"
    );
    ldb_ok(&db, &["compact"]);
    assert_eq!(ldb_ok(&db, &["scan", "--key_hex"]), b"0x0102 : \xff\0\n0x622062 : x y\n");
    assert_eq!(text(&ldb_ok(&db, &["checkconsistency"])), "OK\n");
}

#[test]
fn get_of_a_missing_key_fails_with_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    ldb_ok(&db, &["put", "k", "v", "--create_if_missing"]);
    let out = ldb(&db, &["get", "nope"], b"");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(text(&out.stderr).contains("NotFound"), "{}", text(&out.stderr));
}

#[test]
fn missing_database_is_not_created_without_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let out = ldb(&db, &["put", "k", "v"], b"");
    assert!(!out.status.success());
    assert!(text(&out.stderr).starts_with("Failed: "), "{}", text(&out.stderr));
    assert!(!db.join("CURRENT").exists());
}

#[test]
fn bad_flag_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let out = ldb(&db, &["--bogus_flag", "get", "k"], b"");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("bogus_flag"), "{}", text(&out.stderr));
    assert!(!db.exists(), "a bad command line must not touch the database");
    let out = talus(&["sst_dump", "--file=x.sst", "--bogus_flag"], b"");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("bogus_flag"));
}

#[test]
fn no_or_unknown_subcommand_prints_usage_and_exits_2() {
    for args in [&[][..], &["frobnicate"][..]] {
        let out = talus(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains("usage: talus") && err.contains("sst_dump"), "{err}");
    }
}

#[test]
fn dump_then_load_reproduces_the_database() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("c"));
    // Load a random model through `load --hex` (binary keys and values, > one batch).
    let mut model = BTreeMap::new();
    for _ in 0..2500 {
        let k: Vec<u8> = (0..rng.gen_range(1..12)).map(|_| rng.gen()).collect();
        let v: Vec<u8> = (0..rng.gen_range(0..30)).map(|_| rng.gen()).collect();
        model.insert(k, v);
    }
    let mut input = Vec::new();
    for (k, v) in &model {
        writeln!(input, "{} ==> {}", hex(k), hex(v)).unwrap();
    }
    input.extend_from_slice(b"this line is bad\n");
    let out = ldb_ok_in(&a, &["load", "--hex", "--create_if_missing"], &input);
    assert_eq!(text(&out), "Warning: 1 bad lines ignored.\n");
    let dump_a = ldb_ok(&a, &["dump", "--hex"]);
    let mut expected = input[..input.len() - b"this line is bad\n".len()].to_vec();
    writeln!(expected, "Keys in range: {}", model.len()).unwrap();
    assert_eq!(text(&dump_a), text(&expected));
    // dump | load into a second database gives the same dump (hex and plain).
    assert!(ldb_ok_in(&b, &["load", "--hex", "--create_if_missing"], &dump_a).is_empty());
    assert_eq!(ldb_ok(&b, &["dump", "--hex"]), dump_a);
    let printable = b"k1 ==> v1\nk2 ==> with spaces\nk3 ==> a ==> b\n";
    ldb_ok_in(&c, &["load", "--create_if_missing"], printable);
    let dump_c = ldb_ok(&c, &["dump"]);
    assert_eq!(text(&dump_c), "k1 ==> v1\nk2 ==> with spaces\nk3 ==> a ==> b\nKeys in range: 3\n");
    let d = dir.path().join("d");
    ldb_ok_in(&d, &["load", "--create_if_missing"], &dump_c);
    assert_eq!(ldb_ok(&d, &["dump"]), dump_c);
}

#[test]
fn manifest_dump_lists_edits_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    {
        let opts = talus::Options { create_if_missing: true, ..Default::default() };
        let d = talus::Db::open(&db, opts).unwrap();
        d.put(b"apple", b"1").unwrap();
        d.put(b"zebra", b"2").unwrap();
        d.flush().unwrap();
    }
    let out = text(&ldb_ok(&db, &["manifest_dump"]));
    assert!(out.starts_with("Processing Manifest file "), "{out}");
    assert!(out.contains("VersionEdit @ "), "{out}");
    assert!(out.contains("AddFile: 0 "), "{out}");
    assert!(out.contains("--- level 0 --- 1 files"), "{out}");
    assert!(out.contains("'apple' seq:"), "{out}");
    let prop = text(&ldb_ok(&db, &["get_property", "talus.num-files-at-level0"]));
    assert_eq!(prop, "talus.num-files-at-level0: 1\n");
    assert_eq!(text(&ldb_ok(&db, &["checkconsistency"])), "OK\n");

    // sst_dump on the database directory finds the flushed file.
    let out = talus(&["sst_dump", &format!("--file={}", db.display()), "--command=scan"], b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("'apple' seq:") && s.contains(", type:1 => 1\n"), "{s}");

    // A flipped byte in the live SST makes checkconsistency fail, naming the file.
    let sst = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sst"))
        .expect("a flushed SST");
    let mut bytes = std::fs::read(&sst).unwrap();
    bytes[2] ^= 0x40;
    std::fs::write(&sst, &bytes).unwrap();
    let out = ldb(&db, &["checkconsistency"], b"");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    let name = sst.file_name().unwrap().to_string_lossy().into_owned();
    assert!(err.contains("Corruption") && err.contains(&name), "{err}");
}

fn hex(b: &[u8]) -> String {
    let mut s = String::from("0x");
    for x in b {
        s.push_str(&format!("{x:02X}"));
    }
    s
}

#[test]
fn checkpoint_copies_the_database_into_a_new_directory_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    ldb_ok(&db, &["--create_if_missing", "put", "a", "1"]);
    ldb_ok(&db, &["put", "b", "2"]);
    let cp = dir.path().join("cp");
    let cp_flag = format!("--checkpoint_dir={}", cp.display());
    ldb_ok(&db, &["checkpoint", &cp_flag]);
    ldb_ok(&db, &["put", "c", "3"]);
    assert_eq!(text(&ldb_ok(&cp, &["scan"])), "a : 1\nb : 2\n");
    // An existing directory, or none given: refused, nothing written.
    let before: Vec<_> = std::fs::read_dir(&cp).unwrap().map(|e| e.unwrap().file_name()).collect();
    let out = ldb(&db, &["checkpoint", &cp_flag], b"");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("exists"), "{}", text(&out.stderr));
    let after: Vec<_> = std::fs::read_dir(&cp).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(before, after);
    let out = ldb(&db, &["checkpoint"], b"");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--checkpoint_dir"), "{}", text(&out.stderr));
}

#[test]
fn backup_and_restore_round_trip_into_new_directories_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let b = format!("--backup_dir={}", dir.path().join("b").display());
    ldb_ok(&db, &["--create_if_missing", "put", "a", "1"]);
    assert!(text(&ldb_ok(&db, &["backup", &b])).starts_with("backup 1 created"));
    ldb_ok(&db, &["put", "b", "2"]);
    assert!(text(&ldb_ok(&db, &["backup", &b])).starts_with("backup 2 created"));
    ldb_ok(&dir.path().join("r1"), &["restore", &b, "--backup_id=1"]);
    assert_eq!(text(&ldb_ok(&dir.path().join("r1"), &["scan"])), "a : 1\n");
    ldb_ok(&dir.path().join("r2"), &["restore", &b]);
    assert_eq!(text(&ldb_ok(&dir.path().join("r2"), &["scan"])), "a : 1\nb : 2\n");
    // Into an existing directory, or from a directory that holds no backups: refused, nothing made.
    let out = ldb(&dir.path().join("r2"), &["restore", &b], b"");
    assert!(!out.status.success() && text(&out.stderr).contains("exists"));
    let none = format!("--backup_dir={}", dir.path().join("none").display());
    let out = ldb(&dir.path().join("r3"), &["restore", &none], b"");
    assert!(!out.status.success() && text(&out.stderr).contains("not a backup directory"));
    assert!(!dir.path().join("r3").exists() && !dir.path().join("none").exists());
}

/// A database of merge operands (issue 40): `ldb get`/`scan` show merged values with the merge
/// operator its OPTIONS file names (or `--merge_operator`), refuse to guess without one, and
/// `sst_dump` shows the operands' kind (2, RocksDB's kTypeMerge) until a compaction merges them.
#[test]
fn merge_operands_read_through_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let dbf = format!("--db={}", db.display());
    let o = talus(
        &[
            "db_bench",
            &dbf,
            "--num=1",
            "--writes=3",
            "--value_size=2",
            "--merge_operator=stringappend",
            "--benchmarks=mergerandom,flush",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let key = "--key_hex";
    let k = "0x00000000000000003030303030303030";
    let v = String::from_utf8(ldb_ok(&db, &[key, "get", k])).unwrap();
    assert_eq!(v.trim().matches(',').count(), 2, "three operands joined: {v}");
    let scan = String::from_utf8(ldb_ok(&db, &["scan"])).unwrap();
    assert_eq!(scan.lines().count(), 1, "{scan}");
    let no_op = ldb(&db, &["--merge_operator=nullptr", key, "get", k], b"");
    assert!(!no_op.status.success());
    assert!(String::from_utf8_lossy(&no_op.stderr).contains("merge_operator"));
    let sst = talus(&["sst_dump", &format!("--file={}", db.display()), "--command=scan"], b"");
    let text = String::from_utf8_lossy(&sst.stdout).into_owned();
    assert!(text.contains("type:2"), "{text}");
    ldb_ok(&db, &["compact"]);
    let sst = talus(&["sst_dump", &format!("--file={}", db.display()), "--command=scan"], b"");
    let text = String::from_utf8_lossy(&sst.stdout).into_owned();
    assert!(text.contains("type:1") && !text.contains("type:2"), "{text}");
    assert_eq!(String::from_utf8(ldb_ok(&db, &[key, "get", k])).unwrap(), v);
}

/// `list_column_families` prints RocksDB's lines; `--column_family` works on `default` and
/// refuses a name the database does not have, as RocksDB's `ldb` does, before the command runs.
#[test]
fn column_families_are_listed_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    ldb_ok(&db, &["put", "a", "1", "--create_if_missing"]);
    assert_eq!(
        text(&ldb_ok(&db, &["list_column_families"])),
        format!("Column families in {}: \n{{default}}\n", db.display())
    );
    assert_eq!(text(&ldb_ok(&db, &["--column_family=default", "get", "a"])), "1\n");
    assert_eq!(text(&ldb_ok(&db, &["put", "b", "2", "--column_family=default"])), "OK\n");
    assert_eq!(text(&ldb_ok(&db, &["scan", "--column_family=default"])), "a : 1\nb : 2\n");
    for args in
        [&["--column_family=users", "get", "a"][..], &["--column_family=users", "put", "c", "3"]]
    {
        let out = ldb(&db, args, b"");
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(text(&out.stderr), "Failed: Non-existing column family users\n", "{args:?}");
    }
    assert_eq!(text(&ldb_ok(&db, &["scan"])), "a : 1\nb : 2\n", "the refused put wrote nothing");
    let out = ldb(&dir.path().join("none"), &["list_column_families"], b"");
    assert!(!out.status.success() && text(&out.stderr).contains("Not found"), "{out:?}");
}

/// `create_column_family` and `drop_column_family` (RocksDB's ldb commands); every data command
/// works on the family `--column_family` names; a database with several families opens.
#[test]
fn families_are_created_written_read_and_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    ldb_ok(&db, &["put", "a", "default", "--create_if_missing"]);
    assert_eq!(text(&ldb_ok(&db, &["create_column_family", "users"])), "OK\n");
    let out = ldb(&db, &["create_column_family", "users"], b"");
    assert!(!out.status.success(), "a second `users`: {out:?}");
    assert_eq!(text(&ldb_ok(&db, &["--column_family=users", "put", "a", "user"])), "OK\n");
    ldb_ok_in(&db, &["--column_family=users", "load"], b"b ==> 2\nc ==> 3\n");
    assert_eq!(text(&ldb_ok(&db, &["--column_family=users", "scan"])), "a : user\nb : 2\nc : 3\n");
    assert_eq!(text(&ldb_ok(&db, &["scan"])), "a : default\n", "default is its own keyspace");
    assert_eq!(text(&ldb_ok(&db, &["--column_family=users", "get", "a"])), "user\n");
    ldb_ok(&db, &["--column_family=users", "delete", "b"]);
    ldb_ok(&db, &["--column_family=users", "compact"]);
    assert_eq!(text(&ldb_ok(&db, &["--column_family=users", "dump"])).lines().count(), 3);
    // Properties are the family's: `users` holds `a` and `c`, `default` its `a`.
    let keys = |cf: &str| text(&ldb_ok(&db, &[cf, "get_property", "rocksdb.estimate-num-keys"]));
    assert_eq!(keys("--column_family=users"), "rocksdb.estimate-num-keys: 2\n");
    assert_eq!(keys("--column_family=default"), "rocksdb.estimate-num-keys: 1\n");
    assert_eq!(
        text(&ldb_ok(&db, &["list_column_families"])),
        format!("Column families in {}: \n{{default, users}}\n", db.display())
    );
    assert_eq!(text(&ldb_ok(&db, &["drop_column_family", "users"])), "OK\n");
    let out = ldb(&db, &["drop_column_family", "users"], b"");
    assert!(!out.status.success(), "dropped twice: {out:?}");
    let out = ldb(&db, &["--column_family=users", "get", "a"], b"");
    assert_eq!(text(&out.stderr), "Failed: Non-existing column family users\n");
    assert_eq!(text(&ldb_ok(&db, &["scan"])), "a : default\n");
}
