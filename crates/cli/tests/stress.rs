//! `talus stress` end to end: the built binary on temp directories. A short kill -9 crash loop
//! must pass, and verification must catch an expected state that disagrees with the database
//! (so a passing crash loop means something), accept and resolve pending keys, and accept lost
//! writes only after a `disable_wal` run.

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::{Command, Output};

/// Bytes before slot 0 of the expected-state file, and the slot bits (see stress/expected.rs).
const HEADER: u64 = 64;
const EXISTS: u64 = 1 << 32;
const PENDING: u64 = 1 << 33;
const PENDING_EXISTS: u64 = 1 << 34;

fn talus(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).output().expect("spawn talus")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs a worker on `dir/db` with `dir/exp` and `extra` options; returns (exit code, stdout,
/// stderr).
fn worker(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "stress".to_string(),
        format!("--db={}", dir.join("db").display()),
        format!("--expected_state={}", dir.join("exp").display()),
        "--max_key=500".into(),
        "--threads=2".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = talus(&args);
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn read_slot(f: &std::fs::File, k: u64) -> u64 {
    let mut b = [0u8; 8];
    f.read_exact_at(&mut b, HEADER + 8 * k).unwrap();
    u64::from_le_bytes(b)
}

fn write_slot(f: &std::fs::File, k: u64, v: u64) {
    f.write_all_at(&v.to_le_bytes(), HEADER + 8 * k).unwrap();
}

/// The first key whose slot says it holds a value.
fn first_present(f: &std::fs::File) -> u64 {
    (0..500).find(|&k| read_slot(f, k) & EXISTS != 0).expect("some key is present")
}

fn open_exp(dir: &Path) -> std::fs::File {
    std::fs::OpenOptions::new().read(true).write(true).open(dir.join("exp")).unwrap()
}

#[test]
fn short_crash_loop_passes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let out = talus(&[
        "stress".into(),
        "--crash".into(),
        format!("--db={}", db.display()),
        "--cycles=3".into(),
        "--kill_min_ms=2000".into(),
        "--kill_max_ms=3000".into(),
        "--threads=4".into(),
        "--max_key=2000".into(),
        "--seed=11".into(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "crash loop failed:\n{stdout}\n{}", text(&out.stderr));
    assert_eq!(stdout.lines().filter(|l| l.starts_with("cycle ")).count(), 3, "{stdout}");
    assert!(stdout.contains("final verify-only run: ok"), "{stdout}");
    assert!(stdout.contains("acknowledged sync writes lost 0,"), "{stdout}");
    assert!(stdout.contains("verification failures 0"), "{stdout}");
    assert!(!stdout.contains("operations 0 "), "the workers reported progress: {stdout}");
    assert!(dir.path().join("db.expected").exists(), "expected state beside the db");
}

#[test]
fn verification_catches_a_lost_write_and_a_wrong_value() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = worker(dir.path(), &["--ops_per_thread=400", "--seed=5"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("phase=final") && out.contains("wrong=0"), "{out}");
    let (code, out, err) = worker(dir.path(), &["--verify_only"]);
    assert_eq!(code, 0, "{out}\n{err}");

    // Claim a newer acknowledged write than the database has: a lost write.
    let f = open_exp(dir.path());
    let k = first_present(&f);
    let good = read_slot(&f, k);
    write_slot(&f, k, good + 1);
    let (code, out, err) = worker(dir.path(), &["--verify_only"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("lost_acked=1"), "{out}");
    assert!(err.contains(&format!("key {k}: LOST")), "{err}");

    // Claim an older version than the database has: a value no write could leave.
    write_slot(&f, k, good - 1);
    let (code, out, err) = worker(dir.path(), &["--verify_only"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("wrong=1"), "{out}");

    // Claim the key was deleted.
    write_slot(&f, k, good & !EXISTS);
    let (code, _, err) = worker(dir.path(), &["--verify_only"]);
    assert_eq!(code, 1, "{err}");

    // Restored, it passes again.
    write_slot(&f, k, good);
    let (code, out, err) = worker(dir.path(), &["--verify_only"]);
    assert_eq!(code, 0, "{out}\n{err}");
}

#[test]
fn pending_keys_are_resolved_either_way() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = worker(dir.path(), &["--ops_per_thread=300", "--seed=6"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let f = open_exp(dir.path());
    let k = first_present(&f);
    let good = read_slot(&f, k);
    // A put that was issued but never acknowledged: the old version is still acceptable.
    write_slot(&f, k, good | PENDING | PENDING_EXISTS);
    let (code, out, err) = worker(dir.path(), &["--verify_only"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("pending=1 pending_applied=0"), "{out}");
    assert_eq!(read_slot(&f, k), good, "resolved to the old state and written back");
    // Pending as the state the database actually holds, with the slot one version behind.
    write_slot(&f, k, ((good - 1) & !EXISTS) | PENDING | PENDING_EXISTS);
    let (code, out, err) = worker(dir.path(), &["--verify_only"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("pending=1 pending_applied=1"), "{out}");
    assert_eq!(read_slot(&f, k), good, "resolved to the new state");
    let (code, out, _) = worker(dir.path(), &["--verify_only"]);
    assert_eq!(code, 0);
    assert!(out.contains("pending=0"), "{out}");
}

#[test]
fn writes_without_wal_may_be_lost_only_in_nowal_mode() {
    let dir = tempfile::tempdir().unwrap();
    // Durable base data, then unflushed writes without the WAL: a clean close drops them.
    let (code, out, err) = worker(dir.path(), &["--ops_per_thread=300", "--seed=8"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, out, err) = worker(
        dir.path(),
        &[
            "--ops_per_thread=300",
            "--seed=9",
            "--disable_wal=1",
            "--flush_one_in=0",
            "--compact_range_one_in=0",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, out, err) = worker(dir.path(), &["--verify_only"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("mode=nowal"), "{out}");
    assert!(!out.contains("lost_allowed=0 "), "the unflushed writes are gone: {out}");
    // The expected state adopted what survived: a strict run on top of it passes.
    let (code, out, err) = worker(dir.path(), &["--ops_per_thread=200", "--seed=10"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("mode=nowal") && out.contains("lost_allowed=0 "), "{out}");
}

#[test]
fn crash_driver_fails_when_a_worker_finds_a_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = worker(dir.path(), &["--ops_per_thread=200", "--seed=12"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let f = open_exp(dir.path());
    let k = first_present(&f);
    write_slot(&f, k, read_slot(&f, k) + 1);
    let out = talus(&[
        "stress".into(),
        "--crash".into(),
        format!("--db={}", dir.path().join("db").display()),
        format!("--expected_state={}", dir.path().join("exp").display()),
        "--destroy_db_initially=0".into(),
        "--cycles=2".into(),
        "--kill_min_ms=3000".into(),
        "--kill_max_ms=3000".into(),
        "--seed=1".into(),
        "--max_key=500".into(),
        "--threads=2".into(),
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // The worker's startup verification fails (or, if the kill came first, the verifier's).
    assert!(
        stdout.contains("cycle 1: worker FAILED") || stdout.contains("FAILED (exit"),
        "{stdout}"
    );
    assert!(stdout.contains("verification failures 1"), "{stdout}");
    assert!(!stdout.contains("cycle 2"), "the loop stops at the first failure: {stdout}");
}

/// Regression: a write group used to swallow a `flush` waiting in the write queue (it was
/// marked done without ever running), and that flush then waited forever.
#[test]
fn concurrent_flushes_and_writes_do_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args([
            "stress".to_string(),
            format!("--db={}", dir.path().join("db").display()),
            format!("--expected_state={}", dir.path().join("exp").display()),
            "--max_key=300".into(),
            "--threads=4".into(),
            "--ops_per_thread=300".into(),
            "--flush_one_in=3".into(),
            "--sync=0".into(),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while t.elapsed() < std::time::Duration::from_secs(120) {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    let _ = child.wait();
    panic!("flushes concurrent with writes hung");
}

#[test]
fn bad_usage_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = worker(dir.path(), &["--bogus=1"]);
    assert_eq!(code, 2);
    assert!(err.contains("bogus"), "{err}");
    let (code, _, err) = worker(dir.path(), &["--readpercent=90"]);
    assert_eq!(code, 2);
    assert!(err.contains("add up to"), "{err}");
    let (code, _, err) = worker(dir.path(), &["--wal_recovery_mode=sometimes"]);
    assert_eq!(code, 2);
    assert!(err.contains("wal_recovery_mode") && err.contains("kPointInTimeRecovery"), "{err}");
    // A non-database directory is never deleted by the crash driver.
    let keep = dir.path().join("keep");
    std::fs::create_dir(&keep).unwrap();
    std::fs::write(keep.join("precious"), b"x").unwrap();
    let out = talus(&["stress".into(), "--crash".into(), format!("--db={}", keep.display())]);
    assert_eq!(out.status.code(), Some(2));
    assert!(keep.join("precious").exists());
}

/// Regression (`talus stress --db=X --duration=10` was refused for want of `--expected_state`,
/// where RocksDB's db_stress runs): without it the expected state lives in memory, no file is
/// written anywhere, a previous database is replaced (db_stress's `--destroy_db_initially`
/// default), and `--destroy_db_initially=0` refuses a database it could not judge.
#[test]
fn runs_without_an_expected_state_file_as_db_stress_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let run = |extra: &[&str]| {
        let mut a = vec![
            "stress".to_string(),
            format!("--db={}", db.display()),
            "--duration=2".into(),
            "--max_key=2000".into(),
            "--threads=2".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        talus(&a)
    };
    let names = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    for round in 0..2 {
        let out = run(&[]);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "round {round}: {stdout}\n{}", text(&out.stderr));
        assert_eq!(stdout.matches("stress-verify: ").count(), 2, "{stdout}");
        assert!(stdout.contains("workload done"), "{stdout}");
        assert_eq!(names(), ["db"], "round {round}: a file beside the database");
    }
    let before = std::fs::read_dir(&db).unwrap().count();
    let out = run(&["--destroy_db_initially=0"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("holds a database"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_dir(&db).unwrap().count(), before);
}

/// The crash driver passes every worker option it is given to every cycle instead of drawing
/// it (it once ignored them all but a few, `--options_file` included).
#[test]
fn crash_driver_keeps_the_options_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let opts = dir.path().join("OPTIONS");
    std::fs::write(
        &opts,
        "[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n[DBOptions]\n\
         [CFOptions \"default\"]\n  max_write_buffer_number=3\n",
    )
    .unwrap();
    let out = talus(&[
        "stress".into(),
        "--crash".into(),
        format!("--db={}", dir.path().join("db").display()),
        "--cycles=2".into(),
        "--kill_min_ms=1200".into(),
        "--kill_max_ms=1200".into(),
        "--max_key=500".into(),
        "--threads=2".into(),
        "--seed=3".into(),
        "--compression_type=zstd".into(),
        "--block_size=8192".into(),
        "--sync=0".into(),
        format!("--options_file={}", opts.display()),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let cycles: Vec<&str> = stdout.lines().filter(|l| l.starts_with("cycle ")).collect();
    assert_eq!(cycles.len(), 2, "{stdout}");
    for c in cycles {
        assert!(c.contains("compression=ZSTD") && c.contains("block_size=8192"), "{c}");
        assert!(c.contains("| sync=0 "), "{c}");
    }
}

/// Copies `from`'s files (not its LOCK) into the new directory `to`.
fn copy_db(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "LOCK" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn checkpoints_and_backups_are_checked_and_what_a_kill_leaves_is_judged() {
    let dir = tempfile::tempdir().unwrap();
    let ops =
        ["--ops_per_thread=3000", "--seed=7", "--checkpoint_one_in=300", "--backup_one_in=600"];
    let (code, out, err) = worker(dir.path(), &ops);
    assert_eq!(code, 0, "{out}\n{err}");
    let done = out.lines().find(|l| l.contains("workload done")).unwrap_or_default();
    assert!(!done.contains("checkpoints=0") && !done.contains("backups=0"), "{done}");
    let copies = dir.path().join("exp.copies");
    assert!(copies.join("backup").join("TALUS-BACKUP").exists());

    // A checkpoint left behind that equals the database (a prefix of it) passes and is removed;
    // so is an interrupted one (`.tmp`). The backups are verified and the newest restored.
    copy_db(&dir.path().join("db"), &copies.join("ckpt-1-0-1"));
    std::fs::create_dir_all(copies.join("ckpt-1-0-2.tmp")).unwrap();
    std::fs::write(copies.join("mine.txt"), b"not the tool's").unwrap();
    let (code, out, err) = worker(dir.path(), &["--verify_only"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("checkpoints=1 ") && out.contains("interrupted_checkpoints=1 "), "{out}");
    assert!(!out.contains("backups=0 "), "{out}");
    assert!(!copies.join("ckpt-1-0-1").exists() && !copies.join("ckpt-1-0-2.tmp").exists());
    assert!(copies.join("mine.txt").exists());

    // One whose key holds a value no write made is caught, and named.
    let ck = copies.join("ckpt-1-0-3");
    copy_db(&dir.path().join("db"), &ck);
    let ldb = |args: &[&str]| {
        let mut a = vec!["ldb".to_string(), format!("--db={}", ck.display()), "--hex".into()];
        a.extend(args.iter().map(|s| s.to_string()));
        talus(&a)
    };
    let put = ldb(&["put", "0x0000000000000007", "0x0102"]);
    assert!(put.status.success(), "{}", text(&put.stderr));
    let (code, out, err) = worker(dir.path(), &["--verify_only"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("checkpoint ckpt-1-0-3 left by a kill") && err.contains("key 7"), "{err}");
}

/// `--column_families=3`: keys spread over three families (the database has them afterwards),
/// a crash loop with checkpoints and backups in every cycle passes (the kills land in them
/// too), and the verification still catches a lost write in a family other than `default`.
#[test]
fn column_families_are_stressed_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let out = talus(&[
        "stress".into(),
        "--crash".into(),
        format!("--db={}", db.display()),
        "--cycles=2".into(),
        "--kill_min_ms=1500".into(),
        "--kill_max_ms=2500".into(),
        "--threads=3".into(),
        "--max_key=500".into(),
        "--column_families=3".into(),
        "--checkpoint_one_in=200".into(),
        "--backup_one_in=400".into(),
        "--seed=39".into(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "crash loop failed:\n{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("verification failures 0"), "{stdout}");
    let names = talus::Db::list_column_families(&db, &talus::Options::default()).unwrap();
    assert_eq!(names, ["default", "1", "2"]);

    // A worker on its own: a lost write in family 1 (key 1 mod 3) is caught.
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = worker(dir.path(), &["--ops_per_thread=400", "--column_families=3"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let f = open_exp(dir.path());
    let k = (0..500).find(|&k| k % 3 == 1 && read_slot(&f, k) & EXISTS != 0).unwrap();
    let good = read_slot(&f, k);
    write_slot(&f, k, good + 1);
    let (code, out, err) = worker(dir.path(), &["--verify_only", "--column_families=3"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("lost_acked=1"), "{out}");
    write_slot(&f, k, good);
    let (code, out, err) = worker(dir.path(), &["--verify_only", "--column_families=3"]);
    assert_eq!(code, 0, "{out}\n{err}");

    let (code, _, err) = worker(dir.path(), &["--column_families=0"]);
    assert_eq!(code, 2, "{err}");
}

/// With several families, checkpoints and backups run and are checked in every family: a
/// checkpoint left behind is judged family by family, so a wrong value in family 2 is caught.
#[test]
fn checkpoints_and_backups_of_several_families_are_checked_in_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let ops = [
        "--ops_per_thread=3000",
        "--seed=7",
        "--column_families=3",
        "--checkpoint_one_in=300",
        "--backup_one_in=600",
    ];
    let (code, out, err) = worker(dir.path(), &ops);
    assert_eq!(code, 0, "{out}\n{err}");
    let done = out.lines().find(|l| l.contains("workload done")).unwrap_or_default();
    assert!(!done.contains("checkpoints=0") && !done.contains("backups=0"), "{done}");
    let copies = dir.path().join("exp.copies");

    // A checkpoint left behind that equals the database passes in all three families.
    copy_db(&dir.path().join("db"), &copies.join("ckpt-1-0-1"));
    let (code, out, err) = worker(dir.path(), &["--verify_only", "--column_families=3"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("checkpoints=1 ") && !out.contains("backups=0 "), "{out}");

    // One whose key 8 (family 2) holds a value no write made is caught, and named.
    let ck = copies.join("ckpt-1-0-3");
    copy_db(&dir.path().join("db"), &ck);
    let put = talus(&[
        "ldb".into(),
        format!("--db={}", ck.display()),
        "--column_family=2".into(),
        "--hex".into(),
        "put".into(),
        "0x0000000000000008".into(),
        "0x0102".into(),
    ]);
    assert!(put.status.success(), "{}", text(&put.stderr));
    let (code, out, err) = worker(dir.path(), &["--verify_only", "--column_families=3"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("checkpoint ckpt-1-0-3 left by a kill") && err.contains("key 8"), "{err}");
}
