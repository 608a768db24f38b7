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
    assert!(!html.contains("<b>"), "raw run name leaked");
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
