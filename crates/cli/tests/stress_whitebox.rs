//! `talus stress`'s whitebox side (issue 34): the ingestion op checked like a batch, and kill
//! points refused, naming the feature, in a build without them. The kill points themselves run
//! in `.ci/run` (a build with `--features kill-points`, every point required to fire), and in
//! `bench/crash_campaign.sh`.

use std::path::Path;
use std::process::{Command, Output};

fn talus(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).output().expect("spawn talus")
}

fn run(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "stress".to_string(),
        format!("--db={}", dir.join("db").display()),
        format!("--expected_state={}", dir.join("exp").display()),
        "--max_key=500".into(),
        "--threads=2".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = talus(&args);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// Ingestions of external SSTs (puts and deletes) interleave with every other op and verify,
/// and a second run (a reopen) verifies them again; the scratch directory holds no file after.
#[test]
fn ingestions_are_checked_like_batches() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out, err) = run(tmp.path(), &["--ops_per_thread=3000", "--ingest_one_in=30"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let ingests: u64 = out
        .lines()
        .rev()
        .find_map(|l| l.split(' ').find_map(|f| f.strip_prefix("ingests=")))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(ingests >= 50, "only {ingests} ingestions:\n{out}");
    let (code, out, err) = run(tmp.path(), &["--verify_only"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let scratch = tmp.path().join("exp.ingest");
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0, "files left in the scratch dir");
}

/// With `--column_families=3` each ingestion takes keys of one family into that family
/// (`ingest_external_file_cf`): the verification reads every key from its own family, so a key
/// ingested into another family fails it.
#[test]
fn ingestions_into_families_are_checked_like_batches() {
    let tmp = tempfile::tempdir().unwrap();
    let args = ["--ops_per_thread=3000", "--ingest_one_in=30", "--column_families=3"];
    let (code, out, err) = run(tmp.path(), &args);
    assert_eq!(code, 0, "{out}\n{err}");
    let ingests: u64 = out
        .lines()
        .rev()
        .find_map(|l| l.split(' ').find_map(|f| f.strip_prefix("ingests=")))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(ingests >= 50, "only {ingests} ingestions:\n{out}");
    let (code, out, err) = run(tmp.path(), &["--verify_only", "--column_families=3"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // Families 1 and 2 hold ingested tables of their own.
    let descs = ["1", "2"].map(|n| talus::ColumnFamilyDescriptor::new(n, Default::default()));
    let db = talus::Db::open_cf_read_only(tmp.path().join("db"), Default::default(), descs);
    let db = db.unwrap();
    for name in ["1", "2"] {
        let cf = db.cf_handle(name).unwrap();
        let files: u64 = (0..7)
            .map(|l| db.property_int_cf(&cf, &format!("talus.num-files-at-level{l}")).unwrap())
            .sum();
        assert!(files > 0, "family {name} has no table");
    }
}

#[cfg(not(feature = "kill-points"))]
#[test]
fn kill_points_are_refused_without_the_feature() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, err) = run(tmp.path(), &["--kill_random_test=10"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--features kill-points"), "{err}");
    let db = format!("--db={}", tmp.path().join("crash").display());
    let out = talus(&["stress".into(), "--crash".into(), db, "--kill_points=all".into()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--features kill-points"), "{err}");
    assert!(!tmp.path().join("crash").exists(), "a refused run created the database");
    assert!(!tmp.path().join("db").exists(), "a refused worker created the database");
}

#[test]
fn an_unknown_kill_point_is_refused_naming_the_points() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, err) = run(tmp.path(), &["--kill_random_test=10", "--kill_points=nonsense"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nonsense") && err.contains("manifest.roll.renamed"), "{err}");
}
