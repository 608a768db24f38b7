//! No tool destroys or changes data it was not asked to. Every `talus` subcommand that takes
//! `--db` is run against:
//! - a database another process holds open (a `talus ldb load` waiting on its stdin): every
//!   command that would write refuses with the lock error; the read commands (ldb's, and
//!   `db_bench --readonly`) open read-only, as RocksDB's do, and work; the directory is
//!   byte-identical afterwards and the holder's data intact;
//! - a directory of another program's files (`server.log`, `backup.sst`, `notes.txt`, a `LOG`,
//!   a subdirectory): every command refuses and not one byte changes;
//! - a database with such files beside it: the tools that start from a fresh database replace
//!   the database and leave the other files alone;
//! - a read-only bind mount, and a full disk (a small tmpfs): `ldb get` and `ldb scan` work, a
//!   write fails, and the failed open leaves every byte (and the free space) as it was.
//!
//! The last two need root (mounts); elsewhere they print why they are skipped.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::disk::{args, make_db, scan, snapshot, talus, text, Holder};

/// What a command must do.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    /// Fail with the database's lock error.
    Locked,
    /// Fail (any refusal).
    Refused,
    /// Succeed (it only reads).
    Reads,
}

/// Every subcommand that takes `--db`, against `db` (`other` is a scratch directory outside it
/// for expected-state files and results).
fn commands(db: &Path, other: &Path) -> Vec<(Vec<String>, Expect)> {
    let d = format!("--db={}", db.display());
    let exp = format!("--expected_state={}", other.join("exp").display());
    let res = format!("--results={}", other.join("res").display());
    use Expect::*;
    let c = |v: &[&str], e| (args(v), e);
    vec![
        c(&["db_bench", &d, "--benchmarks=fillseq", "--num=10"], Locked),
        c(&["db_bench", &d, "--use_existing_db", "--benchmarks=overwrite", "--num=10"], Locked),
        c(&["db_bench", &d, "--readonly", "--benchmarks=readrandom", "--num=10"], Reads),
        c(&["ldb", &d, "put", "k", "v"], Locked),
        c(&["ldb", &d, "put", "k", "v", "--create_if_missing"], Locked),
        c(&["ldb", &d, "delete", "key00001"], Locked),
        c(&["ldb", &d, "deleterange", "key0", "key9"], Locked),
        c(&["ldb", &d, "load"], Locked),
        c(&["ldb", &d, "compact"], Locked),
        c(&["ldb", &d, "get", "key00001"], Reads),
        c(&["ldb", &d, "scan"], Reads),
        c(&["ldb", &d, "dump"], Reads),
        c(&["ldb", &d, "get_property", "talus.num-files-at-level0"], Reads),
        c(&["ldb", &d, "checkconsistency"], Reads),
        c(&["ldb", &d, "manifest_dump"], Reads),
        c(&["stress", &d, &exp, "--max_key=100", "--ops_per_thread=10"], Locked),
        c(&["stress", &d, "--max_key=100", "--duration=1"], Locked),
        c(
            &[
                "stress",
                "--crash",
                &d,
                &exp,
                "--cycles=1",
                "--kill_min_ms=100",
                "--kill_max_ms=200",
            ],
            Locked,
        ),
        c(
            &[
                "stress",
                "--crash",
                &d,
                &exp,
                "--cycles=1",
                "--destroy_db_initially=0",
                "--kill_min_ms=100",
                "--kill_max_ms=200",
            ],
            Refused,
        ),
        c(&["ibench", "--engine=talus", &d, &res, "--num=10"], Refused),
        c(&["ibench", "--engine=talus", &d, "--steps=l.x", "--num=10"], Locked),
    ]
}

fn check(cmd: &[String], expect: Expect, out: &Output) {
    let err = text(&out.stderr);
    let ctx = format!("{cmd:?}: exit {}\nstdout: {}\nstderr: {err}", out.status, text(&out.stdout));
    match expect {
        Expect::Reads => assert!(out.status.success(), "{ctx}"),
        Expect::Refused => assert!(!out.status.success(), "{ctx}"),
        Expect::Locked => {
            assert!(!out.status.success(), "{ctx}");
            assert!(err.contains("Database locked") && err.contains("LOCK"), "{ctx}");
        }
    }
}

/// Regression (db_bench and stress --crash wiped a database another process had open: the
/// destroy step deleted its files, LOCK included, and re-created it).
#[test]
fn every_tool_leaves_a_locked_database_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    make_db(&db, 1000);
    let want = scan(&db);
    // The stress tool's copies of the database (checkpoints and backups beside its expected
    // state) are removed only when it replaces the database, which the lock forbids.
    let copies = tmp.path().join("exp.copies");
    std::fs::create_dir_all(copies.join("ckpt-1-0-1")).unwrap();
    std::fs::write(copies.join("ckpt-1-0-1").join("CURRENT"), b"MANIFEST-000001\n").unwrap();
    std::fs::create_dir_all(copies.join("backup")).unwrap();
    std::fs::write(copies.join("backup").join("TALUS-BACKUP"), b"").unwrap();
    let copies_before = snapshot(&copies);
    let holder = Holder::start(&db);
    let before = snapshot(&db);
    for (cmd, expect) in commands(&db, tmp.path()) {
        let out = talus(&cmd);
        check(&cmd, expect, &out);
        let after = snapshot(&db);
        assert!(after == before, "{cmd:?} changed the locked database:\n{before:?}\n{after:?}");
        assert!(snapshot(&copies) == copies_before, "{cmd:?} changed the copies beside it");
    }
    holder.finish();
    assert_eq!(scan(&db), want, "the holder's database lost data");
}

/// Another program's files, the kind a careless `*.log` / `*.sst` match or a
/// `remove_dir_all` takes.
fn foreign_files(dir: &Path) {
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    for (name, body) in [
        ("server.log", "a server's log"),
        ("backup.sst", "a backup"),
        ("notes.txt", "notes"),
        ("sub/000001.sst", "someone's file"),
    ] {
        std::fs::write(dir.join(name), body).unwrap();
    }
}

/// Regression (db_bench deleted `server.log`, `backup.sst` and `LOG` of an unrelated
/// directory; stress --crash removed a directory with its `notes.txt` and `backup/`).
#[test]
fn every_tool_leaves_another_programs_directory_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("theirs");
    foreign_files(&dir);
    std::fs::write(dir.join("LOG"), "another program's LOG").unwrap();
    let before = snapshot(&dir);
    let mut cmds = commands(&dir, tmp.path());
    cmds.push((args(&["sst_dump", &format!("--file={}", dir.display())]), Expect::Refused));
    for (cmd, _) in cmds {
        let out = talus(&cmd);
        assert!(!out.status.success(), "{cmd:?} succeeded on a directory with no database");
        let after = snapshot(&dir);
        assert!(after == before, "{cmd:?} touched another program's files:\n{after:?}");
    }
}

/// The tools that start from a fresh database replace a database that has other files beside
/// it, and leave those files alone.
#[test]
fn replacing_a_database_spares_the_files_beside_it() {
    let tmp = tempfile::tempdir().unwrap();
    for tool in ["db_bench", "stress"] {
        let db = tmp.path().join(tool);
        make_db(&db, 200);
        foreign_files(&db);
        let theirs: BTreeMap<_, _> =
            snapshot(&db).into_iter().filter(|(p, _)| !is_ours(p)).collect();
        let d = format!("--db={}", db.display());
        let exp = format!("--expected_state={}", tmp.path().join("exp").display());
        let cmd = match tool {
            "db_bench" => args(&["db_bench", &d, "--benchmarks=fillseq", "--num=10"]),
            _ => args(&[
                "stress",
                "--crash",
                &d,
                &exp,
                "--cycles=1",
                "--duration=5",
                "--max_key=100",
                "--kill_min_ms=300",
                "--kill_max_ms=400",
            ]),
        };
        let out = talus(&cmd);
        assert!(out.status.success(), "{cmd:?}: {}\n{}", text(&out.stdout), text(&out.stderr));
        let now: BTreeMap<_, _> = snapshot(&db).into_iter().filter(|(p, _)| !is_ours(p)).collect();
        assert_eq!(now, theirs, "{tool} touched the files beside the database");
        assert!(!scan(&db).contains("key00100"), "{tool} did not start from a fresh database");
    }
}

fn is_ours(p: &Path) -> bool {
    p.parent() == Some(Path::new(""))
        && p.to_str().is_some_and(|n| talus::filename::parse_file_name(n).is_some())
}

/// A mount point that is unmounted (and removed) on drop.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn run_ok(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// `ldb get` and `ldb scan` on a read-only bind mount of a database (WAL data included); a write
/// fails and changes nothing.
#[test]
fn ldb_reads_a_read_only_mount() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    make_db(&db, 300);
    let want = scan(&db);
    let ro = tmp.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    if !run_ok(Command::new("mount").arg("--bind").arg(&db).arg(&ro)) {
        println!("skipped: cannot bind-mount here (needs root); the engine's read_only.rs covers the read-only open");
        return;
    }
    let mount = Mount(ro.clone());
    assert!(run_ok(Command::new("mount").args(["-o", "remount,ro,bind"]).arg(&ro)), "remount ro");
    assert!(std::fs::write(ro.join("probe"), b"x").is_err(), "the mount is writable");
    let before = snapshot(&ro);
    let d = format!("--db={}", ro.display());
    let out = talus(&args(&["ldb", &d, "get", "key00299"]));
    assert!(out.status.success(), "get: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "value299\n");
    assert_eq!(scan(&ro), want);
    let out = talus(&args(&["ldb", &d, "put", "k", "v"]));
    assert!(!out.status.success(), "a write on a read-only mount succeeded");
    assert!(snapshot(&ro) == before);
    drop(mount);
}

fn free_bytes(path: &Path) -> u64 {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid C string and `s` a valid out-pointer.
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut s) }, 0);
    s.f_bavail as u64 * s.f_frsize as u64
}

/// A full disk: `ldb get` and `ldb scan` work (nothing is written), `ldb put` fails (its open
/// must flush the WAL's data first) and leaves every byte and the free space as they were.
#[test]
fn ldb_reads_a_full_disk_and_a_failed_write_open_uses_no_space() {
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    if !run_ok(Command::new("mount").args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"]).arg(&mnt)) {
        println!("skipped: cannot mount a tmpfs here (needs root); the engine's open_safety.rs and read_only.rs cover a full disk through SimFs");
        return;
    }
    let _mount = Mount(mnt.clone());
    let db = mnt.join("db");
    make_db(&db, 100);
    // Unflushed data: a read-write open has to write an SST before it can succeed.
    let more: String = (0..2000).map(|i| format!("wal{i:05} ==> {}\n", "x".repeat(200))).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(["ldb", &format!("--db={}", db.display()), "load", "--disable_wal=false"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(more.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
    let want = scan(&db);
    // Fill the disk.
    let mut filler = std::fs::File::create(mnt.join("filler")).unwrap();
    let chunk = vec![0xA5u8; 4096];
    while filler.write_all(&chunk).and_then(|()| filler.sync_all()).is_ok() {}
    drop(filler);
    let free = free_bytes(&mnt);
    let before = snapshot(&db);
    let d = format!("--db={}", db.display());
    let out = talus(&args(&["ldb", &d, "get", "wal01999"]));
    assert!(out.status.success(), "get on a full disk: {}", text(&out.stderr));
    assert_eq!(scan(&db), want);
    let out = talus(&args(&["ldb", &d, "put", "k", "v"]));
    assert!(!out.status.success(), "a write open succeeded on a full disk");
    assert!(
        text(&out.stderr).contains("No space left")
            || text(&out.stderr).contains("StorageFull")
            || text(&out.stderr).contains("space"),
        "{}",
        text(&out.stderr)
    );
    assert!(snapshot(&db) == before, "the failed open changed the database");
    assert_eq!(free_bytes(&mnt), free, "the failed open used space");
    // Room again: the write goes through and nothing was lost.
    std::fs::remove_file(mnt.join("filler")).unwrap();
    let out = talus(&args(&["ldb", &d, "put", "k", "v"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(scan(&db).contains("wal01999"));
}
