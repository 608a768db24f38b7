//! `kill -9` during `talus ldb load`: the reopened database passes `checkconsistency` and holds
//! exactly a prefix of the input lines.

use std::collections::HashSet;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

fn talus() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_talus"));
    c.arg("ldb");
    c
}

fn input_keys(n: u64) -> Vec<String> {
    // A fixed permutation of 0..n (multiplicative hashing mod a prime above n).
    let p = 1_000_003u64;
    (0..n).map(|i| format!("key{:08}", (i * 7919 + 13) % p)).collect()
}

#[test]
fn kill_during_load_leaves_a_consistent_prefix() {
    for round in 0..3u64 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let keys = input_keys(300_000);
        let mut child = talus()
            .args([&format!("--db={}", db.display()), "--create_if_missing", "load"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let kill_after = 50_000 + round as usize * 60_000;
        for (i, k) in keys.iter().enumerate() {
            if i == kill_after {
                if round == 0 {
                    std::thread::sleep(Duration::from_millis(100));
                }
                child.kill().unwrap(); // SIGKILL
                break;
            }
            if writeln!(stdin, "{k} ==> value-of-{k}").is_err() {
                break;
            }
        }
        drop(stdin);
        let _ = child.wait();

        let out =
            talus().args([&format!("--db={}", db.display()), "checkconsistency"]).output().unwrap();
        assert!(
            out.status.success(),
            "checkconsistency failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = talus().args([&format!("--db={}", db.display()), "dump"]).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let mut found = HashSet::new();
        for line in text.lines() {
            if let Some((k, v)) = line.split_once(" ==> ") {
                assert_eq!(v, format!("value-of-{k}"), "wrong value for {k}");
                found.insert(k.to_string());
            }
        }
        let n = found.len();
        eprintln!("round {round}: killed after sending {kill_after} lines, {n} keys recovered");
        assert!(n <= kill_after, "more keys than were sent");
        let prefix: HashSet<String> = keys[..n].iter().cloned().collect();
        assert_eq!(
            found, prefix,
            "round {round}: the {n} keys present are not the first {n} lines"
        );
    }
}
