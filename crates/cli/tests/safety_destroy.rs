//! Issue 34's data-safety repros through the real tools: a directory with engine-named files
//! but no database, and a damaged database, are refused by every tool that starts from a fresh
//! database (`db_bench`, `stress --crash`), naming what was found; not one byte changes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn talus(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn talus")
}

/// Every file under `dir` with its content.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        out.insert(e.path(), std::fs::read(e.path()).unwrap_or_default());
    }
    out
}

/// The commands that start from a fresh database at `db`.
fn fresh_db_commands(db: &Path) -> Vec<Vec<String>> {
    let d = format!("--db={}", db.display());
    let exp = format!("--expected_state={}.expected", db.display());
    vec![
        vec!["db_bench".into(), d.clone(), "--num=10".into(), "--benchmarks=fillseq".into()],
        vec!["stress".into(), "--crash".into(), d, exp, "--duration=1".into()],
    ]
}

fn refused_untouched(db: &Path, what: &str, must_name: &str) {
    let before = snapshot(db);
    for cmd in fresh_db_commands(db) {
        let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
        let out = talus(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what}: {} succeeded", cmd[0]);
        assert!(
            err.contains(must_name),
            "{what}: {}: the error does not name {must_name}: {err}",
            cmd[0]
        );
        assert_eq!(snapshot(db), before, "{what}: {} changed the directory", cmd[0]);
        let expected = PathBuf::from(format!("{}.expected", db.display()));
        assert!(!expected.exists(), "{what}: {} created {}", cmd[0], expected.display());
    }
}

/// `mkdir x; echo app > x/000001.log; echo mine > x/LOG; echo n > x/notes.txt; talus db_bench
/// --db=x --num=10 --benchmarks=fillseq` used to exit 0 having deleted `000001.log` and
/// replaced `LOG`.
#[test]
fn engine_named_files_without_a_database_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let x = tmp.path().join("x");
    std::fs::create_dir(&x).unwrap();
    std::fs::write(x.join("000001.log"), b"app\n").unwrap();
    std::fs::write(x.join("LOG"), b"mine\n").unwrap();
    std::fs::write(x.join("notes.txt"), b"n\n").unwrap();
    refused_untouched(&x, "stray 000001.log", "000001.log");
}

/// A damaged database (SSTs and a MANIFEST but no `CURRENT`; a `CURRENT` naming a missing
/// MANIFEST) used to be wiped whole by the same command, its 2,000-key SST included.
#[test]
fn a_damaged_database_is_refused_not_wiped() {
    for damage in ["no CURRENT", "CURRENT names a missing MANIFEST"] {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("db");
        let d = format!("--db={}", db.display());
        let out = talus(&["db_bench", &d, "--num=2000", "--benchmarks=fillseq,compact"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(std::fs::read_dir(&db)
            .unwrap()
            .flatten()
            .any(|e| { e.file_name().to_string_lossy().ends_with(".sst") }));
        match damage {
            "no CURRENT" => std::fs::remove_file(db.join("CURRENT")).unwrap(),
            _ => std::fs::write(db.join("CURRENT"), b"MANIFEST-000999\n").unwrap(),
        }
        refused_untouched(&db, damage, "not a database");
    }
}
