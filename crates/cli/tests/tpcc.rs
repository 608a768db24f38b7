//! `talus tpcc` end to end at a tiny scale (`--items=1000 --customers=30`: the spec's schema,
//! mix and transactions, fewer rows): consistency conditions 1-4 hold after a two-thread run
//! on each engine; each test-only fault (a Payment that skips D_YTD, a NewOrder that skips an
//! order line) makes the check fail loudly on each engine; and `kill -9` in the middle of runs
//! on Talus leaves a database that reopens with the conditions holding.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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

fn tpcc(engine: &str, db: &Path, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        "tpcc".to_string(),
        format!("--engine={engine}"),
        format!("--db={}", db.display()),
        "--warehouses=2".into(),
        "--items=1000".into(),
        "--customers=30".into(),
        "--threads=2".into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn prepare(engine: &str, db: &Path) {
    let out = ok(&talus(&tpcc(engine, db, &["prepare"])), "prepare");
    assert!(out.contains("loaded warehouse 2"), "{out}");
}

fn consistent_after_a_run(engine: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let res = dir.path().join("res");
    prepare(engine, &db);
    ok(&talus(&tpcc(engine, &db, &["check"])), "check after load");
    let args =
        ["--time=2", "--report_interval=0.5", &format!("--results={}", res.display()), "run"];
    let out = ok(&talus(&tpcc(engine, &db, &args)), "run");
    assert!(
        out.lines().filter(|l| l.starts_with("[ ") && l.contains(" tpmC: ")).count() >= 3,
        "{out}"
    );
    for want in ["condition 1", "condition 2", "condition 3", "condition 4", "consistency: ok"] {
        assert!(out.contains(want), "{want}:\n{out}");
    }
    let summary = std::fs::read_to_string(res.join("summary.csv")).unwrap();
    let (header, row) = summary.split_once('\n').unwrap();
    let get = |name: &str| -> String {
        let i = header.split(',').position(|h| h == name).unwrap();
        row.trim().split(',').nth(i).unwrap().to_string()
    };
    assert_eq!(get("consistency"), "ok");
    assert!(get("tpmc").parse::<f64>().unwrap() > 0.0, "{summary}");
    let n: Vec<f64> = ["new_order", "payment", "order_status", "delivery", "stock_level"]
        .iter()
        .map(|k| get(k).parse().unwrap())
        .collect();
    let total: f64 = n.iter().sum();
    assert!(total > 200.0, "{summary}");
    assert!(
        (0.35..0.55).contains(&(n[0] / total)) && (0.33..0.53).contains(&(n[1] / total)),
        "mix: {n:?}"
    );
    assert!(n[2] > 0.0 && n[3] > 0.0 && n[4] > 0.0, "every type ran: {n:?}");
    let iv = std::fs::read_to_string(res.join("run.intervals.csv")).unwrap();
    assert!(iv.starts_with("elapsed_s,tpmc,tps,") && iv.lines().count() >= 4, "{iv}");
    // The engine-state ticker columns are filled on Talus (statistics are on without a flag):
    // a run of reads has a cache hit rate in some interval. SQLite has none: empty.
    let head: Vec<&str> = iv.lines().next().unwrap().split(',').collect();
    let at = head.iter().position(|h| *h == "cache_hit_pct").unwrap();
    let hits: Vec<&str> = iv.lines().skip(1).map(|l| l.split(',').nth(at).unwrap_or("")).collect();
    if engine == "talus" {
        assert!(hits.iter().any(|h| h.parse::<f64>().is_ok_and(|x| x > 0.0)), "{iv}");
    } else {
        assert!(hits.iter().all(|h| h.is_empty()), "{iv}");
    }
    // The check alone agrees, after reopening.
    let c = ok(&talus(&tpcc(engine, &db, &["check"])), "check");
    assert!(c.contains("consistency: ok"), "{c}");
}

#[test]
fn talus_run_keeps_the_consistency_conditions() {
    consistent_after_a_run("talus");
}

#[test]
fn sqlite_run_keeps_the_consistency_conditions() {
    consistent_after_a_run("sqlite");
}

#[test]
fn broken_transactions_fail_the_check_on_both_engines() {
    for engine in ["talus", "sqlite"] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        prepare(engine, &db);
        for (fault, condition) in [
            ("payment-skips-district-ytd", "condition 1 fails"),
            ("new-order-skips-order-line", "condition 4 fails"),
        ] {
            let o = talus(&tpcc(
                engine,
                &db,
                &["--time=0.5", &format!("--inject_fault={fault}"), "run"],
            ));
            assert_eq!(o.status.code(), Some(1), "{engine} {fault}: {}", text(&o.stdout));
            let err = text(&o.stderr);
            assert!(
                err.contains("CONSISTENCY CHECK FAILED") && err.contains(condition),
                "{engine} {fault}: {err}"
            );
            // And `check` on the damaged database says so too.
            let o = talus(&tpcc(engine, &db, &["check"]));
            assert_eq!(o.status.code(), Some(1), "{engine}: {}", text(&o.stdout));
        }
    }
}

/// Starts a run, waits until it has reported `lines` intervals, kills it with SIGKILL.
fn run_and_kill(db: &Path, lines: usize) -> usize {
    let mut child = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(tpcc("talus", db, &["--time=60", "--report_interval=0.2", "--skip_check", "run"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let out = child.stdout.take().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = 0;
    for line in BufReader::new(out).lines() {
        let Ok(line) = line else { break };
        if line.starts_with("[ ") && line.contains("tpmC: ") {
            seen += 1;
            if seen >= lines || Instant::now() > deadline {
                break;
            }
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    seen
}

#[test]
fn kill_9_during_runs_keeps_the_consistency_conditions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    prepare("talus", &db);
    for (cycle, lines) in [3, 7, 5].into_iter().enumerate() {
        let seen = run_and_kill(&db, lines);
        assert!(seen >= lines, "cycle {cycle}: the run reported {seen} intervals before the kill");
        let o = talus(&tpcc("talus", &db, &["check"]));
        let out = ok(&o, &format!("check after kill {cycle}"));
        assert!(out.contains("consistency: ok"), "{out}");
    }
}
