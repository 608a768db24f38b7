//! `talus report` on real results: tiny `talus ibench` runs on both engines plus a real
//! `talus db_bench` log. Checks the HTML's structure (self-contained, escaped, every chart an
//! SVG with its series drawn inside the plot), then renders the page in headless Chromium and
//! checks that the chart colors are on the screenshot. Without a `chromium` binary the browser
//! half fails when env `CI` is set and is skipped (with a note) otherwise.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{attr, chromium, count_color, non_white, screenshot, tags};

fn talus(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).output().expect("running talus")
}

fn ok(o: &std::process::Output, what: &str) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{what}: {out}\n{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// Results for both engines (the second engine's folder has a name that needs escaping), runs of
/// both engines with 0 and 2 secondary indexes (post 003's table), and a db_bench log with
/// compaction stats.
fn make_results(dir: &Path) -> PathBuf {
    let res = dir.join("results");
    for (engine, folder) in [("talus", "talus"), ("sqlite", "sqlite <b>&amp;")] {
        let o = talus(&[
            "ibench",
            &format!("--engine={engine}"),
            &format!("--db={}", dir.join(format!("db-{engine}")).display()),
            &format!("--results={}", res.join(folder).display()),
            "--steps=l.i0,l.x,l.i1,q100",
            "--num=2000",
            "--num_i1=1000",
            "--rows_per_commit=100",
            "--seconds=1.5",
            "--interval=0.25",
            "--clients=2",
            "--delete_per_insert",
        ]);
        ok(&o, engine);
    }
    for engine in ["talus", "sqlite"] {
        for n in [0, 2] {
            let o = talus(&[
                "ibench",
                &format!("--engine={engine}"),
                &format!("--db={}", dir.join(format!("db-{engine}-{n}")).display()),
                &format!("--results={}", res.join(format!("by-index/{engine}-{n}")).display()),
                "--steps=l.i0,l.x,l.i1",
                &format!("--secondary_indexes={n}"),
                "--num=2000",
                "--num_i1=1000",
                "--rows_per_commit=100",
                "--data_length=256",
                "--drop_page_cache_ms=20",
            ]);
            ok(&o, engine);
        }
    }
    let o = talus(&[
        "db_bench",
        "--benchmarks=fillrandom,readrandom,stats",
        "--num=5000",
        &format!("--db={}", dir.join("db-bench").display()),
    ]);
    let log = ok(&o, "db_bench");
    std::fs::write(res.join("db_bench_talus.log"), log).unwrap();
    res
}

fn check_html(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script"), "no scripts");
    for bad in ["src=", "href=", "@import", "url("] {
        assert!(!html.contains(bad), "external reference {bad}");
    }
    assert!(html.contains("sqlite &lt;b&gt;&amp;amp;"), "run name escaped");
    // Issue 37: the engine's state under the throughput lines (Talus's runs have it).
    assert!(html.contains(": L0 files per interval"), "no engine-state chart");
    assert!(html.contains(": device writes per interval"), "no device chart");
    assert!(!html.contains("<b>"), "raw run name leaked");
    // Issue 37 item 4: post 000's r-delta and v-delta columns, deletes/s, and each client's
    // inserts/s beside their sum (both runs have two clients).
    assert!(html.contains("<th>r-delta MB</th><th>v-delta MB</th>"), "no r-delta column");
    let dps = html.split("l.i1: deletes/s per interval").nth(1).expect("no deletes/s chart");
    let dps = dps.split("</svg>").next().unwrap();
    assert_eq!(tags(dps, "polyline").len(), 2, "one deletes/s line per run");
    let per = html.split("l.i1: inserts/s of each client and their sum per interval").nth(1);
    let per = per.expect("no per-client chart").split("</svg>").next().unwrap();
    for series in ["talus sum", "talus c0", "talus c1", "sqlite &lt;b&gt;&amp;amp; c1"] {
        assert!(
            tags(per, "polyline").iter().any(|t| attr(t, "data-series").as_deref() == Some(series)),
            "no line {series} in the per-client chart"
        );
    }
    let svgs = tags(html, "svg");
    assert_eq!(svgs.len(), html.matches("</svg>").count());
    assert!(svgs.len() >= 12, "{} charts", svgs.len());
    let (w, h): (f64, f64) = (
        attr(svgs[0], "width").unwrap().parse().unwrap(),
        attr(svgs[0], "height").unwrap().parse().unwrap(),
    );
    // Line charts: both runs drawn in q100's queries/s chart, all points inside the chart.
    let lines = tags(html, "polyline");
    assert!(lines.len() >= 8, "{} polylines", lines.len());
    for l in &lines {
        let pts = attr(l, "points").unwrap();
        let pts: Vec<(f64, f64)> = pts
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        assert!(!pts.is_empty(), "{l}");
        assert!(pts.iter().all(|&(x, y)| (0.0..=w).contains(&x) && (0.0..=h).contains(&y)), "{l}");
    }
    let q100 =
        html.split("q100: queries/s per interval").nth(1).unwrap().split("</svg>").next().unwrap();
    for series in ["talus", "sqlite &lt;b&gt;&amp;amp;"] {
        let poly = tags(q100, "polyline")
            .into_iter()
            .find(|t| attr(t, "data-series").as_deref() == Some(series))
            .unwrap_or_else(|| panic!("no q100 line for {series}"));
        let n = attr(poly, "points").unwrap().split_whitespace().count();
        assert!(n >= 3, "q100 of 1.5 s at 0.25 s intervals has {n} points for {series}");
    }
    let bars = tags(html, "rect class=\"bar\"");
    assert!(bars.len() >= 10, "{} bars", bars.len());
    for b in &bars {
        let bh: f64 = attr(b, "height").unwrap().parse().unwrap();
        let y: f64 = attr(b, "y").unwrap().parse().unwrap();
        assert!(bh > 0.0 && y >= 0.0 && y + bh <= h, "{b}");
    }
    assert!(html.contains("db_bench ops/sec") && html.contains(">fillrandom<"));
    assert!(html.contains("class=\"compaction-stats\""), "compaction stats table");
    assert!(html.contains("<h2 id=\"step-l.i1\">"));
    // Post 003's table: both engines, PK-only, 2 and (the runs above) 3 secondaries, each cell
    // ipsAvg-ipsP95-dbSize-rssSize with the share of the PK-only rate; its bar chart.
    let table = html.split("<table class=\"by-indexes\">").nth(1).unwrap().split("</table>").next();
    let table = table.unwrap();
    assert!(
        table.contains("<th>PK-only</th><th>PK, 2 secondaries</th><th>PK, 3 secondaries</th>"),
        "{table}"
    );
    for engine in ["talus", "sqlite"] {
        let row = table.split(&format!("<td class=\"name\">{engine}</td>")).nth(1).unwrap();
        let row = row.split("</tr>").next().unwrap();
        assert_eq!(row.matches("<td>").count(), 3, "{row}");
        assert!(row.contains("<small>100%</small>"), "{row}");
    }
    let chart = html.split("l.i1 inserts/s by secondary indexes").nth(1).unwrap();
    let chart = chart.split("</svg>").next().unwrap();
    assert_eq!(tags(chart, "rect class=\"bar\"").len(), 6, "two engines x three index counts");
}

#[test]
fn report_from_both_engines_and_db_bench() {
    let dir = tempfile::tempdir().unwrap();
    let res = make_results(dir.path());
    let out = dir.path().join("report.html");
    let o = talus(&[
        "report",
        &format!("--results={}", res.display()),
        &format!("--out={}", out.display()),
    ]);
    let msg = ok(&o, "report");
    assert!(msg.contains("6 run(s), 1 db_bench log(s)"), "{msg}");
    let html = std::fs::read_to_string(&out).unwrap();
    check_html(&html);

    let Some(bin) = chromium() else {
        assert!(std::env::var_os("CI").is_none(), "CI needs chromium (.ci/run installs it)");
        eprintln!("report test: no chromium binary, skipped the browser check");
        return;
    };
    let (px, width) = screenshot(&bin, &out, dir.path(), 3000);
    // The first two series colors are used only by chart lines, bars and legend swatches.
    let (blue, red) = (count_color(&px, "#1f77b4"), count_color(&px, "#d62728"));
    assert!(blue > 2000 && red > 2000, "chart colors on screen: blue {blue}, red {red}");
    let rows = px.len() / 4 / width;
    eprintln!("report test: {width}x{rows} screenshot, chart pixels blue {blue} red {red}");
    let non_white = non_white(&px);
    assert!(non_white * 50 > width * rows, "page is nearly blank: {non_white} non-white pixels");
}

/// sysbench on both engines (a few tests) and two TPC-C runs on Talus that differ only by the
/// rate limiter, as post 002's experiment: the page has the relative summary table and charts
/// (bars inside their chart, a line per run per chart), and renders in Chromium.
fn make_oltp_results(dir: &Path) -> PathBuf {
    let res = dir.join("results");
    for engine in ["sqlite", "talus"] {
        let db = dir.join(format!("sb-{engine}"));
        let common = [
            "sysbench".to_string(),
            format!("--engine={engine}"),
            format!("--db={}", db.display()),
            "--tables=2".into(),
            "--table_size=2000".into(),
        ];
        let mut a = common.to_vec();
        a.push("prepare".into());
        ok(&talus(&a.iter().map(String::as_str).collect::<Vec<_>>()), "sysbench prepare");
        let mut a = common.to_vec();
        a.extend([
            "--time=0.4".to_string(),
            "--report_interval=0.1".into(),
            format!("--results={}", res.join(format!("sb-{engine}")).display()),
            "point-query,hot-points,range-pk.range10,range-covered-si.range100,update-index,insert"
                .into(),
            "run".into(),
        ]);
        ok(&talus(&a.iter().map(String::as_str).collect::<Vec<_>>()), "sysbench run");
    }
    let db = dir.join("tpcc");
    let common = [
        "tpcc".to_string(),
        format!("--db={}", db.display()),
        "--items=1000".into(),
        "--customers=30".into(),
    ];
    let mut a = common.to_vec();
    a.push("prepare".into());
    ok(&talus(&a.iter().map(String::as_str).collect::<Vec<_>>()), "tpcc prepare");
    for rl in ["0", "1048576"] {
        let mut a = common.to_vec();
        a.extend([
            "--time=1.2".to_string(),
            "--report_interval=0.2".into(),
            format!("--rate_limiter_bytes_per_sec={rl}"),
            format!("--results={}", res.join(format!("tpcc-rl{rl}")).display()),
            "run".into(),
        ]);
        ok(&talus(&a.iter().map(String::as_str).collect::<Vec<_>>()), "tpcc run");
    }
    res
}

#[test]
fn report_of_sysbench_and_tpcc_runs() {
    let dir = tempfile::tempdir().unwrap();
    let res = make_oltp_results(dir.path());
    let out = dir.path().join("oltp.html");
    let o = talus(&[
        "report",
        &format!("--results={}", res.display()),
        &format!("--out={}", out.display()),
        "--base=sqlite",
    ]);
    let msg = ok(&o, "report");
    assert!(msg.contains("2 sysbench run(s), 2 tpcc run(s)"), "{msg}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && !html.contains("<script"));
    // The relative summary: a column for talus vs sqlite, every group's five statistics.
    let rel =
        html.split("<table class=\"relative\">").nth(1).unwrap().split("</table>").next().unwrap();
    assert!(rel.contains("sb-talus <small>vs sb-sqlite</small>"), "{rel}");
    for g in ["point", "range", "write"] {
        for st in ["avg", "median", "min", "max", "stddev"] {
            assert!(rel.contains(&format!(">{g}: {st}</td><td>")), "{g}: {st}");
        }
    }
    // Horizontal bar charts (one per group): every bar inside its own chart.
    let hbars: Vec<&str> = html.split("data-kind=\"hbar\"").skip(1).collect();
    assert_eq!(hbars.len(), 3);
    for chart in &hbars {
        let h: f64 = attr(chart, "height").unwrap().parse().unwrap();
        let chart = chart.split("</svg>").next().unwrap();
        let bars = tags(chart, "rect class=\"bar\"");
        assert!(!bars.is_empty());
        for b in bars {
            let (y, bh): (f64, f64) = (
                attr(b, "y").unwrap().parse().unwrap(),
                attr(b, "height").unwrap().parse().unwrap(),
            );
            let (x, bw): (f64, f64) = (
                attr(b, "x").unwrap().parse().unwrap(),
                attr(b, "width").unwrap().parse().unwrap(),
            );
            assert!(y >= 0.0 && y + bh <= h && bw > 0.0 && x + bw <= 560.0, "{b}");
        }
        assert!(chart.contains("class=\"reference\""), "the 1.0 line");
    }
    // TPC-C: tpmC per interval with one line per rate-limiter setting.
    let tpm =
        html.split("TPC-C: tpmC per interval").nth(1).unwrap().split("</svg>").next().unwrap();
    for run in ["tpcc-rl0", "tpcc-rl1048576"] {
        let poly = tags(tpm, "polyline")
            .into_iter()
            .find(|t| attr(t, "data-series").as_deref() == Some(run))
            .unwrap_or_else(|| panic!("no tpmC line for {run}"));
        assert!(attr(poly, "points").unwrap().split_whitespace().count() >= 4, "{poly}");
    }
    assert!(html.contains(">1 MiB/s<") && html.contains(">off<"), "rate limiter column");
    assert!(html.contains(">ok<"), "consistency column");

    let Some(bin) = chromium() else {
        assert!(std::env::var_os("CI").is_none(), "CI needs chromium (.ci/run installs it)");
        eprintln!("report test: no chromium binary, skipped the browser check");
        return;
    };
    let (px, width) = screenshot(&bin, &out, dir.path(), 3000);
    let count = |hex: &str| {
        let c: Vec<u8> =
            (0..3).map(|i| u8::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap()).collect();
        px.chunks(4)
            .filter(|p| (0..3).all(|i| (i32::from(p[i]) - i32::from(c[i])).abs() <= 12))
            .count()
    };
    let (blue, red) = (count("#1f77b4"), count("#d62728"));
    assert!(blue > 2000 && red > 1000, "chart colors on screen: blue {blue}, red {red}");
    let keep = std::env::var_os("TALUS_REPORT_SCREENSHOT");
    if let Some(p) = keep {
        std::fs::copy(dir.path().join("shot.png"), &p).unwrap();
        std::fs::copy(&out, Path::new(&p).with_extension("html")).unwrap();
    }
    eprintln!("oltp report test: {width}px wide screenshot, blue {blue} red {red}");
}

/// The configuration sweep in one command (bench/ibench_configs.sh) and its report page: one
/// table per step with a row per configuration and ratios to `base`, one line per
/// configuration in the interval charts, checked in headless Chromium.
#[test]
fn configuration_sweep_report() {
    let dir = tempfile::tempdir().unwrap();
    let configs = dir.path().join("configs.txt");
    std::fs::write(
        &configs,
        "# a comment\nbase\nc5_subcomp4 --max_subcompactions=4\nc3 --intra_l0_compaction=false\n",
    )
    .unwrap();
    let out = dir.path().join("sweep");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/ibench_configs.sh");
    let o = std::process::Command::new("bash")
        .arg(&script)
        .arg(&configs)
        .arg(&out)
        .args([
            "--steps=l.i0,l.x,l.i1",
            "--num=3000",
            "--num_i1=3000",
            "--rows_per_commit=100",
            "--write_buffer_size=65536",
            "--target_file_size_base=65536",
            "--max_bytes_for_level_base=262144",
        ])
        .env("TALUS", env!("CARGO_BIN_EXE_talus"))
        .output()
        .unwrap();
    let msg = ok(&o, "ibench_configs.sh");
    assert!(msg.contains("== c5_subcomp4: --max_subcompactions=4"), "{msg}");
    for name in ["base", "c5_subcomp4", "c3"] {
        assert!(out.join(name).join("l.i1.stats.txt").is_file(), "{name}");
        assert!(!out.join("db").join(name).exists(), "{name}: database left behind");
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let sweep = &html[html.find("<h2 id=\"sweep\">").expect("sweep section")..];
    let sweep = &sweep[..sweep.find("<h2 id=\"step-").unwrap_or(sweep.len())];
    let tables = tags(sweep, "table");
    assert_eq!(tables.len(), 3, "one table per step");
    for t in ["l.i0", "l.x", "l.i1"] {
        assert!(sweep.contains(&format!("<h3>{t}</h3>")), "{t}");
    }
    for name in ["base", "c5_subcomp4", "c3"] {
        assert_eq!(sweep.matches(&format!("<td class=\"name\">{name}</td>")).count(), 3, "{name}");
    }
    assert!(sweep.contains("L0-&gt;base Avg(sec)") && sweep.contains("(1.00)"));
    // The l.i1 interval charts: one line per configuration.
    let i1 = &html[html.find("<h2 id=\"step-l.i1\">").unwrap()..];
    for name in ["base", "c5_subcomp4", "c3"] {
        assert!(i1.contains(&format!(">{name}</text>")), "{name} has no line in the l.i1 charts");
    }
    let Some(bin) = chromium() else {
        assert!(std::env::var_os("CI").is_none(), "CI needs chromium (.ci/run installs it)");
        eprintln!("sweep report test: no chromium binary, skipped the browser check");
        return;
    };
    let (px, width) = screenshot(&bin, &out.join("report.html"), dir.path(), 2400);
    let colors: Vec<usize> =
        ["#1f77b4", "#d62728", "#2ca02c"].iter().map(|c| count_color(&px, c)).collect();
    assert!(colors.iter().all(|&n| n > 500), "one color per configuration on screen: {colors:?}");
    let rows = px.len() / 4 / width;
    assert!(non_white(&px) * 50 > width * rows, "page is nearly blank");
}
