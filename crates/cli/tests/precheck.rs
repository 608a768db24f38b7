//! Every tool checks everything it can before it creates anything (issue 34, item 2): a run
//! refused for its input leaves no file behind.
//!
//! - [`a_refused_run_creates_nothing`]: each tool that writes (db_bench, ibench, sysbench, tpcc,
//!   stress and its crash driver, ldb's write commands, report) with a bad input (a flag value
//!   or combination, a step order, a missing OPTIONS file, a foreign or misplaced output path),
//!   against `--db` as an empty directory and as a path that does not exist: the command fails
//!   and the whole parent directory is byte-identical afterwards (no database, no results
//!   folder, no `<db>.expected` or other file beside it). cache_bench writes no file at all.
//! - [`a_locked_database_gets_no_files_beside_it`]: the tools with an output beside the
//!   database (stress's expected-state file and the crash driver's folder for it, ibench's,
//!   sysbench's and tpcc's `--results`) against a database another process holds: the lock
//!   error, and nothing created.

mod common;

use std::path::Path;

use common::disk::{make_db, snapshot, talus, text, Holder};

/// Bad inputs, one row per case: the arguments, with `{db}` for the database path and `{dir}`
/// for its parent, which holds `afile` (another program's file) and `bench/fill.log` (a
/// db_bench log `talus report` can read).
const CASES: &[&[&str]] = &[
    // db_bench
    &["db_bench", "--db={db}", "--benchmarks=fillseq,bogus", "--num=10"],
    &["db_bench", "--db={db}", "--benchmarks=fillseq", "--options_file={dir}/missing.ini"],
    &["db_bench", "--db={db}", "--benchmarks=fillseq", "--compression_type=brotli"],
    &["db_bench", "--db={db}", "--use_existing_db", "--benchmarks=readrandom", "--num=10"],
    // ibench: the step order (issue 34), indexes never built (issue 35), the results folder
    &["ibench", "--db={db}", "--steps=q100,l.i0", "--num=10", "--seconds=1"],
    &["ibench", "--db={db}", "--steps=l.x,l.i0", "--num=10"],
    &["ibench", "--db={db}", "--steps=l.i0,l.i0", "--num=10"],
    &["ibench", "--db={db}", "--steps=l.i0,l.i1", "--num=10", "--secondary_indexes=3"],
    &["ibench", "--db={db}", "--steps=l.i0,l.i1,l.x", "--num=10"],
    &["ibench", "--engine=sqlite", "--db={db}", "--steps=q100,l.i0", "--num=10"],
    &["ibench", "--engine=sqlite", "--db={db}", "--steps=l.i0,l.i1", "--num=10"],
    &["ibench", "--db={db}", "--steps=l.i1", "--num_i1=10", "--results={dir}/res"],
    &["ibench", "--db={db}", "--steps=l.i0,l.x", "--num=10", "--results={dir}/afile/res"],
    // sysbench and tpcc
    &["sysbench", "--db={db}", "--table_size=10", "--results={dir}/res", "prepare"],
    &["sysbench", "--db={db}", "--tables=0", "prepare"],
    &["sysbench", "--db={db}", "--time=1", "--results={dir}/res", "point-query", "run"],
    &["sysbench", "--engine=sqlite", "--db={db}", "check"],
    &["tpcc", "--db={db}", "--results={dir}/res", "prepare"],
    &["tpcc", "--engine=sqlite", "--db={db}", "--warehouses=0", "prepare"],
    &["tpcc", "--db={db}", "--time=1", "--results={dir}/res", "run"],
    // stress: a worker run
    &["stress", "--db={db}", "--readpercent=50", "--duration=1"],
    &["stress", "--db={db}", "--options_file={dir}/missing.ini", "--duration=1"],
    &["stress", "--db={db}", "--expected_state={dir}/afile", "--duration=1"],
    &["stress", "--db={db}", "--expected_state={dir}/afile", "--destroy_db_initially=1"],
    &["stress", "--db={db}", "--expected_state={dir}/nodir/exp", "--duration=1"],
    // stress --crash: worker options it once ignored, a foreign expected-state file it deleted
    &["stress", "--crash", "--db={db}", "--cycles=1", "--readpercent=50"],
    &["stress", "--crash", "--db={db}", "--cycles=1", "--options_file={dir}/missing.ini"],
    &["stress", "--crash", "--db={db}", "--cycles=1", "--max_key=0", "--expected_state={dir}/a/e"],
    &["stress", "--crash", "--db={db}", "--cycles=1", "--expected_state={dir}/afile"],
    &["stress", "--crash", "--db={db}", "--cycles=1", "--expected_state={dir}/afile/e"],
    &["stress", "--crash", "--db={db}", "--cycles=1", "--verify_only"],
    &["stress", "--crash", "--db={db}", "--cycles=1", "--compaction_style=fifo"],
    // ldb's write commands
    &["ldb", "--db={db}", "--create_if_missing", "--hex", "put", "zz", "v"],
    &["ldb", "--db={db}", "--create_if_missing", "bogus"],
    &["ldb", "--db={db}", "--create_if_missing", "--options_file={dir}/missing.ini", "put", "k"],
    &["ldb", "--db={db}", "--create_if_missing", "deleterange", "b", "a"],
    &["ldb", "--db={db}", "put", "k", "v"],
    // report: the page is its only output
    &["report", "--results={dir}/bench", "--out={db}/sub/report.html"],
    &["report", "--results={dir}/bench", "--out={dir}/report.html", "--base=nosuch"],
    &["report", "--results={db}", "--out={dir}/report.html"],
];

/// The parent directory of a case: another program's file and a db_bench log.
fn parent() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("afile"), "another program's file").unwrap();
    std::fs::create_dir(dir.path().join("bench")).unwrap();
    std::fs::write(
        dir.path().join("bench/fill.log"),
        "fillseq      :       1.000 micros/op 1000000 ops/sec 1.0 seconds 1000000 operations;\n",
    )
    .unwrap();
    dir
}

fn fill(case: &[&str], db: &Path, dir: &Path) -> Vec<String> {
    let (db, dir) = (db.display().to_string(), dir.display().to_string());
    case.iter().map(|a| a.replace("{db}", &db).replace("{dir}", &dir)).collect()
}

/// Regression (ibench created the database and then failed on the step order, leaving it;
/// `--secondary_indexes=3` without `l.x` ran a PK-only benchmark; the crash driver ignored
/// worker options, made the expected state's folders before a worker refused `--max_key=0`,
/// and deleted a foreign file named as `--expected_state`; sysbench and tpcc `prepare`
/// ignored `--results`).
#[test]
fn a_refused_run_creates_nothing() {
    let mut failures = Vec::new();
    for case in CASES {
        for empty in [true, false] {
            let dir = parent();
            let db = dir.path().join("db");
            if empty {
                std::fs::create_dir(&db).unwrap();
            }
            let before = snapshot(dir.path());
            let cmd = fill(case, &db, dir.path());
            let out = talus(&cmd);
            let after = snapshot(dir.path());
            let what = if empty { "an empty --db" } else { "a missing --db" };
            if out.status.success() {
                failures.push(format!("{cmd:?} on {what} succeeded:\n{}", text(&out.stdout)));
            } else if after != before {
                let new: Vec<_> = after.keys().filter(|p| !before.contains_key(*p)).collect();
                failures.push(format!(
                    "{cmd:?} on {what} changed the directory (new: {new:?}); stderr: {}",
                    text(&out.stderr)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

/// Regression (stress wrote its 800 KB expected-state file, and ibench its results folder,
/// before failing on the lock of a database another process held).
#[test]
fn a_locked_database_gets_no_files_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    make_db(&db, 200);
    let holder = Holder::start(&db);
    let before = snapshot(dir.path());
    let cases: &[&[&str]] = &[
        &["stress", "--db={db}", "--expected_state={dir}/exp", "--max_key=100000"],
        &["stress", "--db={db}", "--max_key=1000"],
        &[
            "stress",
            "--crash",
            "--db={db}",
            "--destroy_db_initially=0",
            "--expected_state={dir}/new/exp",
            "--cycles=1",
        ],
        &["stress", "--crash", "--db={db}", "--cycles=1"],
        &["ibench", "--db={db}", "--steps=l.i1", "--results={dir}/ib"],
        &["sysbench", "--db={db}", "--time=1", "--results={dir}/sb", "point-query", "run"],
        &["tpcc", "--db={db}", "--time=1", "--results={dir}/tp", "run"],
        &["db_bench", "--db={db}", "--benchmarks=fillseq", "--num=10"],
    ];
    for case in cases {
        let cmd = fill(case, &db, dir.path());
        let out = talus(&cmd);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{cmd:?} ran on a locked database");
        assert!(err.contains("Database locked") && err.contains("LOCK"), "{cmd:?}: {err}");
        let after = snapshot(dir.path());
        let new: Vec<_> = after.keys().filter(|p| !before.contains_key(*p)).collect();
        assert!(after == before, "{cmd:?} created or changed files: {new:?}");
    }
    holder.finish();
}
