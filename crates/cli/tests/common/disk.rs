//! Running the `talus` binary against databases and directories, for the data-safety tests
//! (`safety.rs`, `precheck.rs`): a byte-exact snapshot of a directory tree to compare before
//! and after a command, a small database made with `talus ldb load`, and a [`Holder`] that
//! keeps a database open (its LOCK held) in another process.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `talus` with `args` (stdin closed); waits for it.
pub fn talus(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn talus")
}

/// `b` as text (lossy).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `v` as owned arguments.
pub fn args(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Every entry under `dir` (recursively) by relative path: `(size, crc32c)` of a file, `None`
/// for a directory.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Option<(u64, u32)>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Option<(u64, u32)>>) {
        for e in std::fs::read_dir(dir).expect("read dir") {
            let e = e.expect("entry");
            let rel = e.path().strip_prefix(root).expect("under root").to_path_buf();
            if e.file_type().expect("type").is_dir() {
                out.insert(rel, None);
                walk(root, &e.path(), out);
            } else {
                // A file the holder deletes while its open finishes (an obsolete WAL) is gone
                // by the time it is read: the snapshot is then of a changing directory, which
                // `Holder::start` waits out.
                match std::fs::read(e.path()) {
                    Ok(b) => {
                        out.insert(rel, Some((b.len() as u64, crc32c(&b))));
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                    Err(err) => panic!("reading {}: {err}", e.path().display()),
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// crc32c (Castagnoli), bitwise: the test needs no speed.
pub fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0x82F6_3B78 } else { crc >> 1 };
        }
    }
    !crc
}

/// Loads `n` keys `key<i>` into a new database at `db` (flushed partly: SSTs and a WAL).
pub fn make_db(db: &Path, n: usize) {
    let lines: String = (0..n).map(|i| format!("key{i:05} ==> value{i}\n")).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args([
            "ldb",
            &format!("--db={}", db.display()),
            "--create_if_missing",
            "load",
            "--compact",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn load");
    child.stdin.take().expect("stdin").write_all(lines.as_bytes()).expect("feed");
    assert!(child.wait().expect("wait").success());
    let more: String = (n..n + 50).map(|i| format!("key{i:05} ==> value{i}\n")).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(["ldb", &format!("--db={}", db.display()), "load"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn load");
    child.stdin.take().expect("stdin").write_all(more.as_bytes()).expect("feed");
    assert!(child.wait().expect("wait").success());
}

pub fn scan(db: &Path) -> String {
    let out = talus(&args(&["ldb", &format!("--db={}", db.display()), "scan"]));
    assert!(out.status.success(), "scan: {}", text(&out.stderr));
    text(&out.stdout)
}

/// A `talus ldb load` holding `db` open (its stdin stays open until [`Holder::finish`]).
pub struct Holder {
    child: Child,
}

impl Holder {
    pub fn start(db: &Path) -> Holder {
        let child = Command::new(env!("CARGO_BIN_EXE_talus"))
            .args(["ldb", &format!("--db={}", db.display()), "load"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn holder");
        // Ready once the LOCK is held (seen in /proc/locks, without taking it: a probe that
        // locked it could make the holder fail) and the open has finished writing.
        let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(db.join("LOCK")).unwrap());
        let t = Instant::now();
        while !std::fs::read_to_string("/proc/locks")
            .expect("/proc/locks")
            .lines()
            .any(|l| l.contains("FLOCK") && l.contains(&format!(":{ino} ")))
        {
            assert!(t.elapsed() < Duration::from_secs(20), "the holder never took the LOCK");
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut last = snapshot(db);
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let now = snapshot(db);
            if now == last {
                break;
            }
            last = now;
        }
        Holder { child }
    }

    /// Closes the holder's stdin and waits: it must exit cleanly.
    pub fn finish(mut self) {
        drop(self.child.stdin.take());
        assert!(self.child.wait().expect("wait").success(), "the holder failed");
    }
}
