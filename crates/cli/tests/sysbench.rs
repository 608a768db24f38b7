//! `talus sysbench` end to end on tiny tables, on both engines: read-write transactions (two
//! threads, with conflicts) leave every table consistent with its secondary index and with
//! its row count; the output is sysbench's; the results files hold what the run did; and the
//! check is shown to fail when a transaction is broken on purpose (the test-only fault) or
//! when an index loses entries behind the table layer's back.

use std::path::Path;
use std::process::{Command, Output};

fn talus(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).output().expect("spawn talus")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(o: &Output, what: &str) -> String {
    let out = text(&o.stdout);
    assert!(o.status.success(), "{what}: {out}\n{}", text(&o.stderr));
    out
}

const ROWS: u64 = 2000;

fn sb(engine: &str, db: &Path, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        "sysbench".to_string(),
        format!("--engine={engine}"),
        format!("--db={}", db.display()),
        "--tables=2".into(),
        format!("--table_size={ROWS}"),
        "--rand_seed=7".into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn prepare(engine: &str, db: &Path) {
    let out = ok(&talus(&sb(engine, db, &["--threads=2", "prepare"])), "prepare");
    assert!(out.contains("Inserting 2000 records into 'sbtest2'"), "{out}");
    assert!(out.contains("Creating a secondary index on 'sbtest1'"), "{out}");
}

fn check(engine: &str, db: &Path, rows: u64) -> Output {
    talus(&sb(engine, db, &[&format!("--expect_rows={rows}"), "check"]))
}

fn consistent_after_read_write(engine: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let res = dir.path().join("res");
    prepare(engine, &db);
    let out = ok(
        &talus(&sb(
            engine,
            &db,
            &[
                "--threads=2",
                "--time=1",
                "--report_interval=0.25",
                &format!("--results={}", res.display()),
                "read-write,update-index,write-only",
                "run",
            ],
        )),
        "run",
    );
    // sysbench's per-interval lines and summary block.
    let intervals: Vec<&str> = out.lines().filter(|l| l.starts_with("[ ")).collect();
    assert!(intervals.len() >= 6, "{out}");
    assert!(intervals.iter().all(|l| l.contains(" thds: 2 tps: ") && l.contains("lat (ms,95%): ")));
    for want in [
        "SQL statistics:",
        "queries performed:",
        "transactions:",
        "95th percentile:",
        "Threads fairness:",
    ] {
        assert!(out.contains(want), "{want} missing:\n{out}");
    }
    let o = check(engine, &db, ROWS);
    let c = ok(&o, "check");
    assert!(c.contains("sbtest2: 2000 rows, index k_2 matches the rows"), "{c}");
    assert!(c.contains("check: ok"), "{c}");
    // The results: one summary row per test, real work in each, intervals per test.
    let summary = std::fs::read_to_string(res.join("summary.csv")).unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    assert_eq!(lines.len(), 4, "{summary}");
    let header: Vec<&str> = lines[0].split(',').collect();
    let col = |row: &str, name: &str| -> f64 {
        let i = header.iter().position(|h| *h == name).unwrap();
        row.split(',').nth(i).unwrap().parse().unwrap()
    };
    for row in &lines[1..] {
        assert!(col(row, "events") > 10.0 && col(row, "tps") > 0.0, "{row}");
        assert!(col(row, "writes") >= col(row, "events"), "every event writes: {row}");
    }
    let rw = lines[1];
    assert!(rw.starts_with("read-write,write,"), "{rw}");
    // sysbench's read-write: 14 reads, 4 writes, 2 others (BEGIN, COMMIT) per transaction.
    assert_eq!(col(rw, "reads"), 14.0 * col(rw, "events"), "{rw}");
    assert_eq!(col(rw, "other"), 2.0 * col(rw, "events"), "{rw}");
    assert!(res.join("update-index.intervals.csv").is_file());
    assert!(std::fs::read_to_string(res.join("run.json")).unwrap().contains("\"talus sysbench\""));
}

/// `--time=0 --events=N` (fixed work): post 004's added tests run on both engines, their
/// events plus ignored errors are exactly N, the tables stay consistent, summary.csv has the
/// CPU columns, and `summary` prints CPU per query relative to the base as well as throughput.
#[test]
fn fixed_work_post004_tests_and_cpu_per_query_on_both_engines() {
    let dir = tempfile::tempdir().unwrap();
    let tests = [
        "points-covered-pk",
        "points-covered-si.pre",
        "points-notcovered-pk",
        "points-notcovered-si",
        "range-covered-pk.range10",
        "update-inlist",
        "update-one",
        "update-zipf",
    ];
    for engine in ["talus", "sqlite"] {
        let db = dir.path().join(engine);
        prepare(engine, &db);
        let res = dir.path().join("res").join(engine);
        let o = talus(&sb(engine, &db, &["--time=0", "--events=0", "point-query", "run"]));
        assert_eq!(o.status.code(), Some(2), "nothing to do is refused");
        assert!(text(&o.stderr).contains("--events=0"), "{}", text(&o.stderr));
        let out = ok(
            &talus(&sb(
                engine,
                &db,
                &[
                    "--threads=2",
                    "--time=0",
                    "--events=40",
                    "--rand_type=pareto",
                    &format!("--results={}", res.display()),
                    &tests.join(","),
                    "run",
                ],
            )),
            "run",
        );
        for want in ["CPU (getrusage, over the test):", "client threads:", "µs/query"] {
            assert!(out.contains(want), "{engine}: {want} missing:\n{out}");
        }
        let summary = std::fs::read_to_string(res.join("summary.csv")).unwrap();
        let lines: Vec<&str> = summary.lines().collect();
        let header: Vec<&str> = lines[0].split(',').collect();
        let cell = |row: &str, name: &str| -> String {
            let i = header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}"));
            row.split(',').nth(i).unwrap().to_string()
        };
        let names: Vec<String> = lines[1..].iter().map(|r| cell(r, "test")).collect();
        assert_eq!(names, tests, "{summary}");
        for row in &lines[1..] {
            let n = |c: &str| cell(row, c).parse::<f64>().unwrap_or_else(|_| panic!("{c}: {row}"));
            assert_eq!(n("events") + n("errors"), 40.0, "{engine}: {row}");
            for c in ["cpu_user_s", "cpu_sys_s", "cpu_us_per_query", "cs_per_query"] {
                assert!(n(c) >= 0.0, "{c}: {row}");
            }
            if cfg!(target_os = "linux") {
                assert!(n("thread_cpu_us_per_query") >= 0.0, "{row}");
            }
        }
        let f = ok(&talus(&sb(engine, &db, &["flush"])), "flush");
        assert!(f.contains("flushed"), "{f}");
        ok(&check(engine, &db, ROWS), "check");
    }
    let o = talus(&[
        "sysbench".into(),
        format!("--results={}", dir.path().join("res").display()),
        "--base=sqlite".into(),
        "summary".into(),
    ]);
    let s = ok(&o, "summary");
    for want in [
        "Throughput relative to the base",
        "CPU per query relative to the base",
        "Point: median",
        "points-covered-si.pre",
    ] {
        assert!(s.contains(want), "{want} missing:\n{s}");
    }
}

#[test]
fn talus_read_write_keeps_tables_consistent() {
    consistent_after_read_write("talus");
}

#[test]
fn sqlite_read_write_keeps_tables_consistent() {
    consistent_after_read_write("sqlite");
}

/// The fault drops the re-insert of read-write's delete + insert pair: the count check fails.
#[test]
fn a_broken_transaction_fails_the_check_on_both_engines() {
    for engine in ["talus", "sqlite"] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        prepare(engine, &db);
        let args = ["--time=0.5", "--inject_fault=read-write-skips-insert", "read-write", "run"];
        ok(&talus(&sb(engine, &db, &args)), "faulty run");
        let o = check(engine, &db, ROWS);
        assert_eq!(o.status.code(), Some(1), "{engine}: {}", text(&o.stdout));
        assert!(text(&o.stderr).contains("rows, expected 2000"), "{engine}: {}", text(&o.stderr));
    }
}

/// An index that lost entries (deleted behind the table layer) fails the check.
#[test]
fn an_index_missing_entries_fails_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    prepare("talus", &db);
    ok(&check("talus", &db, ROWS), "check before");
    {
        // sbtest1 is the catalog's first table (id 256), sbtest2 the second (257); the indexes
        // are created after loading: k_1 gets id 258 (docs/format/table-keys.md).
        let d = talus::Db::open(&db, talus::Options::default()).unwrap();
        d.delete_range(258u32.to_be_bytes().to_vec()..259u32.to_be_bytes().to_vec()).unwrap();
    }
    let o = check("talus", &db, ROWS);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("entries in index k_1"), "{}", text(&o.stderr));
}

#[test]
fn bad_flags_are_refused_before_the_database_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    for (a, want) in
        [("--tables=0", "--tables"), ("--bogus=1", "bogus"), ("--engine=x", "--engine")]
    {
        let o = talus(&sb("talus", &db, &[a, "prepare"]));
        assert_eq!(o.status.code(), Some(2), "{a}");
        assert!(text(&o.stderr).contains(want), "{a}: {}", text(&o.stderr));
    }
    assert!(!db.exists());
}
