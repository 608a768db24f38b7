//! `bench/regress.py` end to end on this build's `talus` (as two prebuilt `@PATH` variants, so
//! nothing is compiled), then `talus report` on its output: the text has post 004's summary
//! rows, regress.json has a ratio for every microbenchmark, and the page has one ratio chart
//! per group and measure with a bar per microbenchmark for the second variant, drawn inside the
//! chart, which headless Chromium shows. Needs `python3` (and `chromium` for the browser half):
//! without them the test fails when env `CI` is set and is skipped with a note otherwise.

mod common;

use std::path::Path;
use std::process::Command;

use common::{attr, chromium, count_color, non_white, screenshot, tags};

fn have(bin: &str) -> bool {
    Command::new(bin).arg("--version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn regress_two_variants_and_its_report() {
    if !have("python3") {
        assert!(std::env::var_os("CI").is_none(), "CI needs python3");
        eprintln!("regress test: no python3, skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/regress.py");
    let bin = env!("CARGO_BIN_EXE_talus");
    let res = dir.path().join("res");
    let o = Command::new("python3")
        .arg(&script)
        .arg(format!("--variants=base=@{bin},same=@{bin}"))
        .args(["--num=2000", "--rounds=1", "--count=none", "--no-sysbench"])
        .arg(format!("--work={}", dir.path().join("work").display()))
        .arg(format!("--out={}", res.display()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{text}\n{}", String::from_utf8_lossy(&o.stderr));
    for want in ["Point: median", "Range: stddev", "Write: avg", "geomean", "readrandom "] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
    assert!(text.contains("profile release"), "build line from db_bench's header: {text}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("regress.json")).unwrap()).unwrap();
    let benches: Vec<String> = json["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap().to_string())
        .collect();
    assert!(benches.len() >= 9, "{benches:?}");
    assert!(!benches.iter().any(|b| b == "compact"), "setup steps are not reported");
    for key in ["ops_sec", "cpu_us_op"] {
        let ratios = &json["summary"]["first"][key]["ratios"]["same"];
        for b in &benches {
            let r = ratios[b].as_f64().unwrap_or_else(|| panic!("{key} ratio of {b}"));
            assert!(r > 0.0 && r.is_finite(), "{key} {b} {r}");
        }
    }
    let rss = json["summary"]["memory"]["base"]["readrandom"]["rss_mb"].as_f64().unwrap();
    assert!(rss > 1.0, "peak RSS of readrandom: {rss} MB");

    let page = dir.path().join("report.html");
    let o = Command::new(bin)
        .args(["report", &format!("--results={}", res.display())])
        .arg(format!("--out={}", page.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h2 class=\"regress\">") && !html.contains("<script"));
    // Two measures (no instruction counts with --count=none) times three groups.
    let charts: Vec<&str> = html.split("<svg ").skip(1).collect();
    assert_eq!(charts.len(), 6, "ratio charts");
    for c in &charts {
        let bars = tags(c, "rect class=\"bar\"");
        let named: Vec<String> = bars.iter().filter_map(|b| attr(b, "data-series")).collect();
        assert!(!bars.is_empty() && named.iter().all(|n| benches.contains(n)), "{c}");
        for b in &bars {
            let (y, h): (f64, f64) = (
                attr(b, "y").unwrap().parse().unwrap(),
                attr(b, "height").unwrap().parse().unwrap(),
            );
            assert!(h >= 1.0 && y >= 0.0 && y + h <= 300.0, "{b}");
        }
    }
    assert_eq!(html.matches("Point: stddev").count(), 2, "a summary table per measure");

    let Some(browser) = chromium() else {
        assert!(std::env::var_os("CI").is_none(), "CI needs chromium (.ci/run installs it)");
        eprintln!("regress test: no chromium binary, skipped the browser check");
        return;
    };
    let (px, width) = screenshot(&browser, &page, dir.path(), 2400);
    let (blue, red) = (count_color(&px, "#1f77b4"), count_color(&px, "#d62728"));
    eprintln!("regress test: chart pixels blue {blue} red {red}");
    assert!(blue > 300 && red > 300, "bars on screen: blue {blue}, red {red}");
    assert!(non_white(&px) * 50 > px.len() / 4, "page nearly blank ({width} wide)");
}

/// `bench/regress.py --suite=SUITE --num=NUM` over this build's `talus` as two prebuilt
/// variants `a` and `b` (one round, nothing counted): its stdout and regress.json, or `None`
/// (the test skipped) without python3 outside CI.
fn run_suite(suite: &str, num: u32) -> Option<(String, serde_json::Value)> {
    if !have("python3") {
        assert!(std::env::var_os("CI").is_none(), "CI needs python3");
        eprintln!("regress test: no python3, skipped");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/regress.py");
    let bin = env!("CARGO_BIN_EXE_talus");
    let res = dir.path().join("res");
    let o = Command::new("python3")
        .arg(&script)
        .arg(format!("--variants=a=@{bin},b=@{bin}"))
        .arg(format!("--suite={suite}"))
        .arg(format!("--num={num}"))
        .args(["--rounds=1", "--count=none"])
        .arg(format!("--work={}", dir.path().join("work").display()))
        .arg(format!("--out={}", res.display()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{text}\n{}", String::from_utf8_lossy(&o.stderr));
    let json =
        serde_json::from_str(&std::fs::read_to_string(res.join("regress.json")).unwrap()).unwrap();
    Some((text, json))
}

/// `bench/regress.py --suite=sysbench` runs the real `talus sysbench` steps (fixed work: an
/// event count), reports each of post 004's microbenchmarks by group, and lists nothing as not
/// applicable for a build that has them all.
#[test]
fn regress_runs_the_sysbench_suite() {
    let Some((text, json)) = run_suite("sysbench", 2000) else { return };
    let benches: Vec<(String, String)> = json["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["name"].as_str().unwrap().into(), b["group"].as_str().unwrap().into()))
        .collect();
    for (want, group) in [
        ("sb_points-covered-pk.pre", "point"),
        ("sb_update-zipf", "write"),
        ("sb_range-covered-pk.range100", "range"),
        ("sb_scan", "range"),
    ] {
        assert!(benches.contains(&(want.into(), group.into())), "{want}: {benches:?}");
    }
    assert_eq!(benches.len(), 37, "14 reads twice (.pre and after the writes), 9 writes");
    for (b, _) in &benches {
        let ops = &json["results"]["a"][b]["ops"][0];
        assert!(ops.as_f64().is_some_and(|n| n >= 4.0), "{b}: {ops}");
    }
    assert_eq!(json["not_applicable"].as_array().map(Vec::len), Some(0), "{text}");
    assert!(text.contains("Write: median") && text.contains("sb_update-one"), "{text}");
}

/// `bench/regress.py --suite=ibench` runs the real `talus ibench`: the PK-order load and the
/// inserts with 0 and 3 secondary indexes, each with the row count it was given (the l.i1
/// steps insert --num/4 rows after loading --num/2), in the write group.
#[test]
fn regress_runs_the_ibench_suite() {
    let Some((text, json)) = run_suite("ibench", 4000) else { return };
    for (bench, rows) in [("ib_l.i0", 4000.0), ("ib_l.i1_0idx", 1000.0), ("ib_l.i1_3idx", 1000.0)] {
        let ops = &json["results"]["b"][bench]["ops"][0];
        assert_eq!(ops.as_f64(), Some(rows), "{bench}: {text}");
        let found = json["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["name"].as_str() == Some(bench) && b["group"].as_str() == Some("write"));
        assert!(found, "{bench} in the write group: {}", json["benchmarks"]);
    }
    assert_eq!(json["not_applicable"].as_array().map(Vec::len), Some(0), "{text}");
    assert!(text.contains("ib_l.i1_3idx"), "{text}");
}
