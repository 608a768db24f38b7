//! A small SVG writer for the report: line charts (one polyline per series) and grouped bar
//! charts, with axes, ticks, a title and a legend. Output is a self-contained `<svg>` element
//! to inline in HTML; every piece of text goes through [`esc`]. Pure functions, no IO.
//!
//! Structure the tests rely on: the root is `<svg class="chart" data-kind="line|bar">`, each
//! series of a line chart is one `<polyline class="series" data-series=NAME>`, each bar is a
//! `<rect class="bar" data-series=NAME>` with positive height, legend entries are in
//! `<g class="legend">`, and a chart without data says so in `<text class="nodata">`.
//!
//! This module is the frame every chart shares (sizes, palette, escaping, number labels, axes,
//! legend); the charts are in `line.rs` ([`line_chart`]) and `bars.rs` ([`bar_chart`],
//! [`ratio_chart`], [`hbar_chart`]), re-exported here. Called by the report's pages.

use std::fmt::Write;

mod bars;
mod line;

pub use bars::{bar_chart, hbar_chart, ratio_chart};
pub use line::line_chart;

/// Chart width in pixels.
pub const WIDTH: f64 = 560.0;
/// Chart height in pixels.
pub const HEIGHT: f64 = 300.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 56.0;

/// Series colors, in order (the report's PNG test looks for these).
pub const PALETTE: [&str; 6] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];

/// The engine-state interval columns ([`crate::engine_state`]) drawn under a tool's throughput
/// chart: `(column, title, unit)`.
pub const ENGINE_STATE_CHARTS: &[(&str, &str, &str)] = &[
    ("l0_files", "L0 files", "files"),
    ("imm_memtables", "immutable memtables", "memtables"),
    ("pending_compaction_mb", "pending compaction bytes", "MiB"),
    ("stall", "write stall (0 none, 1 delayed, 2 stopped)", "state"),
    ("stalled_ms", "stalled time", "ms"),
    ("compact_write_mb", "compaction writes", "MiB"),
    ("dev_write_mb", "device writes", "MiB"),
    ("dev_read_mb", "device reads", "MiB"),
    ("throttle_wait_ms", "device throttle waits", "ms"),
];

/// Escapes text for HTML and SVG (element content and quoted attribute values).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// One line of a line chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// (x, y) points in x order.
    pub points: Vec<(f64, f64)>,
}

/// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `n` ticks over `span`.
fn nice_step(span: f64, n: f64) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / n;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Short tick label: 1.5k, 2M, 0.25.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{}G", trim(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

fn open(kind: &str, title: &str, out: &mut String) {
    let _ = write!(
        out,
        "<svg class=\"chart\" data-kind=\"{kind}\" xmlns=\"http://www.w3.org/2000/svg\" \
         width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         font-family=\"sans-serif\" font-size=\"11\"><rect x=\"0\" y=\"0\" width=\"{WIDTH}\" \
         height=\"{HEIGHT}\" fill=\"#ffffff\" stroke=\"#dddddd\"/><text class=\"title\" \
         x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">{}</text>",
        WIDTH / 2.0,
        esc(title)
    );
}

fn nodata(out: &mut String) {
    let _ = write!(
        out,
        "<text class=\"nodata\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#888888\">no \
         data</text></svg>",
        WIDTH / 2.0,
        HEIGHT / 2.0
    );
}

/// Y axis from 0 to a nice maximum >= `max`, with grid lines and labels; returns the maximum.
/// With `log`, the axis is in [`log_units`] and labelled 0, 1, 10, 100, ...
fn y_axis(max: f64, label: &str, log: bool, out: &mut String) -> f64 {
    let step = if log { 1.0 } else { nice_step(if max > 0.0 { max } else { 1.0 }, 5.0) };
    let top = (max / step).ceil().max(1.0) * step;
    axis(0.0, top, step, label, log, out);
    top
}

/// Draws a y axis from `lo` to `top` with a grid line and label every `step`.
fn axis(lo: f64, top: f64, step: f64, label: &str, log: bool, out: &mut String) {
    let h = HEIGHT - TOP - BOTTOM;
    let mut v = lo;
    while v <= top + step * 0.01 {
        let y = TOP + h - (v - lo) / (top - lo) * h;
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#eeeeee\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            LEFT - 4.0,
            y + 4.0,
            esc(&fmt_num(if log && v > 0.0 { 10f64.powf(v - 1.0) } else { v }))
        );
        v += step;
    }
    let _ = write!(
        out,
        "<text x=\"14\" y=\"{:.1}\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">{}\
         </text><line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{:.1}\" stroke=\"#333333\"/>\
         <line x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#333333\"/>",
        TOP + h / 2.0,
        TOP + h / 2.0,
        esc(label),
        TOP + h,
        TOP + h,
        WIDTH - RIGHT,
        TOP + h
    );
}

/// The legend: entries left to right, wrapping onto more rows when a row would run past the
/// chart's right edge. The first row sits in the bottom margin, below the x labels; further
/// rows go below it, and the chart (`out`, which [`open`] began) grows by a row's height for
/// each, so the legend never covers the plot however many series there are (stacked upwards,
/// sysbench's 16 series per chart covered the bars).
fn legend(names: &[&str], out: &mut String) {
    let width = |n: &str| 24.0 + 7.0 * n.chars().count() as f64;
    let mut rows = vec![Vec::new()];
    let mut x = LEFT;
    for (i, n) in names.iter().enumerate() {
        let w = width(n);
        if x + w > WIDTH - RIGHT + 24.0 && x > LEFT {
            rows.push(Vec::new());
            x = LEFT;
        }
        if let Some(r) = rows.last_mut() {
            r.push((i, x, *n));
        }
        x += w;
    }
    let extra = 13.0 * (rows.len() - 1) as f64;
    if extra > 0.0 {
        let h = HEIGHT + extra;
        // The chart's size and its background, as `open` wrote them (first occurrences).
        *out = out
            .replacen(
                &format!("height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\""),
                &format!("height=\"{h}\" viewBox=\"0 0 {WIDTH} {h}\""),
                1,
            )
            .replacen(
                &format!("height=\"{HEIGHT}\" fill=\"#ffffff\""),
                &format!("height=\"{h}\" fill=\"#ffffff\""),
                1,
            );
    }
    out.push_str("<g class=\"legend\">");
    for (r, row) in rows.iter().enumerate() {
        let y = HEIGHT - 12.0 + 13.0 * r as f64;
        for &(i, x, n) in row {
            let color = PALETTE[i % PALETTE.len()];
            let _ = write!(
                out,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"12\" height=\"10\" fill=\"{color}\"/>\
                 <text x=\"{:.1}\" y=\"{y:.1}\">{}</text>",
                y - 9.0,
                x + 16.0,
                esc(n)
            );
        }
    }
    out.push_str("</g>");
}

/// A count on a log axis: 0 stays 0, `v >= 1` becomes `log10(v) + 1` (so 1 is one unit up).
pub fn log_units(v: f64) -> f64 {
    if v >= 1.0 {
        v.log10() + 1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests;
