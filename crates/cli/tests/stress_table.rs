//! `talus stress --workload=table` end to end: a short kill -9 loop keeps every secondary index
//! consistent with the rows, and a verify-only run catches an index that lost entries (so a
//! passing loop means something).

use std::process::{Command, Output};

fn talus(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).output().expect("spawn talus")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn table_crash_loop_passes() {
    let dir = tempfile::tempdir().unwrap();
    let out = talus(&[
        "stress".into(),
        "--crash".into(),
        "--workload=table".into(),
        format!("--db={}", dir.path().join("db").display()),
        "--cycles=3".into(),
        "--kill_min_ms=1500".into(),
        "--kill_max_ms=2500".into(),
        "--threads=3".into(),
        "--max_key=1000".into(),
        "--seed=5".into(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "crash loop failed:\n{stdout}\n{}", text(&out.stderr));
    assert_eq!(stdout.lines().filter(|l| l.starts_with("cycle ")).count(), 3, "{stdout}");
    assert!(stdout.contains("final verify-only run: ok"), "{stdout}");
    assert!(stdout.contains("mode=table"), "{stdout}");
    assert!(!stdout.contains("operations 0 "), "the workers reported progress: {stdout}");
}

#[test]
fn verify_catches_an_index_that_lost_entries() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a = vec![
            "stress".to_string(),
            "--workload=table".into(),
            format!("--db={}", db.display()),
            format!("--expected_state={}", dir.path().join("exp").display()),
            "--max_key=300".into(),
            "--threads=2".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let out = talus(&args(&["--duration=1"]));
    assert!(out.status.success(), "{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("phase=end mode=table"));
    {
        // The table is the catalog's first (id 256); its first index, by_a, has id 257
        // (docs/format/table-keys.md).
        let d = talus::Db::open(&db, talus::Options::default()).unwrap();
        d.delete_range(257u32.to_be_bytes().to_vec()..258u32.to_be_bytes().to_vec()).unwrap();
    }
    let out = talus(&args(&["--verify_only"]));
    assert_eq!(out.status.code(), Some(1), "{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stderr).contains("VERIFICATION FAILED"), "{}", text(&out.stderr));
}
