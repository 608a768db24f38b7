//! The bar charts: [`bar_chart`] (grouped bars from 0, linear or log), [`ratio_chart`] (bars
//! from the line at 1.0, on an axis that spans the values) and [`hbar_chart`] (horizontal bars,
//! as tall as its categories need), on the frame of [`super`]. Pure functions, no IO; called
//! by the report's pages through `svg::{bar_chart, ratio_chart, hbar_chart}`.

use std::fmt::Write;

use super::{
    axis, esc, fmt_num, legend, log_units, nice_step, nodata, open, trim, y_axis, BOTTOM, HEIGHT,
    LEFT, PALETTE, RIGHT, TOP, WIDTH,
};

/// A grouped bar chart: for each category one bar per series (`values[series][category]`).
/// With `log`, bar heights are [`log_units`] of the values (for histograms whose tail buckets
/// would otherwise be invisible next to the first).
pub fn bar_chart(
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
    log: bool,
) -> String {
    let mut out = String::new();
    open("bar", title, &mut out);
    let scale = |v: f64| if log { log_units(v) } else { v };
    let vals = || series.iter().flat_map(|s| s.1.iter()).filter(|v| v.is_finite());
    if categories.is_empty() || vals().all(|v| *v <= 0.0) {
        nodata(&mut out);
        return out;
    }
    let top = y_axis(vals().fold(0.0, |a, &b| f64::max(a, scale(b))), y_label, log, &mut out);
    let (w, h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let group = w / categories.len() as f64;
    let bw = (group * 0.8 / series.len().max(1) as f64).max(1.0);
    for (ci, c) in categories.iter().enumerate() {
        let gx = LEFT + ci as f64 * group + group * 0.1;
        for (si, (name, v)) in series.iter().enumerate() {
            let Some(&val) = v.get(ci) else { continue };
            if !(val.is_finite() && val > 0.0) {
                continue;
            }
            let bh = (scale(val) / top * h).max(1.0);
            let _ = write!(
                out,
                "<rect class=\"bar\" data-series=\"{}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" \
                 height=\"{bh:.1}\" fill=\"{}\"><title>{}: {}</title></rect>",
                esc(name),
                gx + si as f64 * bw,
                TOP + h - bh,
                PALETTE[si % PALETTE.len()],
                esc(name),
                esc(&fmt_num(val))
            );
        }
        category_label(c, gx + group * 0.4, TOP + h + 14.0, &mut out);
    }
    finish_with_legend(series, out)
}

/// A grouped bar chart of ratios to a base (`values[series][category]`, 0 = missing): each bar
/// goes from the line at 1.0 up (ratio above 1) or down to its value, on an axis that spans the
/// values and 1.0 rather than starting at 0, so a 2% difference is visible.
pub fn ratio_chart(title: &str, categories: &[String], series: &[(String, Vec<f64>)]) -> String {
    let mut out = String::new();
    open("bar", title, &mut out);
    let vals = || series.iter().flat_map(|s| s.1.iter()).filter(|v| v.is_finite() && **v > 0.0);
    if categories.is_empty() || vals().next().is_none() {
        nodata(&mut out);
        return out;
    }
    let lo_v = vals().fold(1.0, |a: f64, b| a.min(*b));
    let hi_v = vals().fold(1.0, |a: f64, b| a.max(*b));
    let step = nice_step((hi_v - lo_v).max(0.02), 5.0);
    let lo = ((lo_v / step).floor() * step - step).max(0.0);
    let top = (hi_v / step).ceil() * step + step;
    axis(lo, top, step, "ratio", false, &mut out);
    let (w, h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let ys = |v: f64| TOP + h - (v - lo) / (top - lo) * h;
    let _ = write!(
        out,
        "<line class=\"reference\" x1=\"{LEFT}\" y1=\"{0:.1}\" x2=\"{1:.1}\" y2=\"{0:.1}\" \
         stroke=\"#333333\" stroke-dasharray=\"4 3\"/>",
        ys(1.0),
        WIDTH - RIGHT
    );
    let group = w / categories.len() as f64;
    let bw = (group * 0.8 / series.len().max(1) as f64).max(1.0);
    for (ci, c) in categories.iter().enumerate() {
        let gx = LEFT + ci as f64 * group + group * 0.1;
        for (si, (name, v)) in series.iter().enumerate() {
            let Some(&val) = v.get(ci) else { continue };
            if !(val.is_finite() && val > 0.0) {
                continue;
            }
            let (y0, y1) = (ys(1.0), ys(val));
            let bh = (y0 - y1).abs().max(1.0);
            let _ = write!(
                out,
                "<rect class=\"bar\" data-series=\"{}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" \
                 height=\"{bh:.1}\" fill=\"{}\"><title>{} {}: {:.3}</title></rect>",
                esc(name),
                gx + si as f64 * bw,
                y0.min(y1),
                PALETTE[si % PALETTE.len()],
                esc(c),
                esc(name),
                val
            );
        }
        category_label(c, gx + group * 0.4, TOP + h + 14.0, &mut out);
    }
    finish_with_legend(series, out)
}

/// A category's name under its group of bars, centred at `x`.
fn category_label(name: &str, x: f64, y: f64, out: &mut String) {
    let _ =
        write!(out, "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"middle\">{}</text>", esc(name));
}

/// The legend of a vertical bar chart's series, then the end of the document.
fn finish_with_legend(series: &[(String, Vec<f64>)], mut out: String) -> String {
    legend(&series.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(), &mut out);
    out.push_str("</svg>");
    out
}

/// A horizontal grouped bar chart (category labels on the left, one bar per series in each
/// category, `values[series][category]`), as tall as its categories need; with `reference`, a
/// dashed vertical line at that value (1.0 for relative throughput). Root
/// `<svg class="chart" data-kind="hbar">`, bars `<rect class="bar" data-series=NAME>`.
pub fn hbar_chart(
    title: &str,
    x_label: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
    reference: Option<f64>,
) -> String {
    let label_w =
        8.0 + 6.2 * categories.iter().map(|c| c.chars().count()).max().unwrap_or(4) as f64;
    let left = label_w.max(LEFT);
    let row = (6.0 + 9.0 * series.len() as f64).max(14.0);
    let plot_h = row * categories.len().max(1) as f64;
    // Below the plot: tick labels, the axis label, then one legend line per series (names of
    // compared runs are long).
    let height = TOP + plot_h + 40.0 + 16.0 * series.len().max(1) as f64;
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg class=\"chart\" data-kind=\"hbar\" xmlns=\"http://www.w3.org/2000/svg\" \
         width=\"{WIDTH}\" height=\"{height:.0}\" viewBox=\"0 0 {WIDTH} {height:.0}\" \
         font-family=\"sans-serif\" font-size=\"11\"><rect x=\"0\" y=\"0\" width=\"{WIDTH}\" \
         height=\"{height:.0}\" fill=\"#ffffff\" stroke=\"#dddddd\"/><text class=\"title\" \
         x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">{}</text>",
        WIDTH / 2.0,
        esc(title)
    );
    let vals = || series.iter().flat_map(|s| s.1.iter()).filter(|v| v.is_finite() && **v > 0.0);
    if categories.is_empty() || vals().next().is_none() {
        let _ = write!(
            out,
            "<text class=\"nodata\" x=\"{}\" y=\"{:.1}\" text-anchor=\"middle\" \
             fill=\"#888888\">no data</text></svg>",
            WIDTH / 2.0,
            height / 2.0
        );
        return out;
    }
    let max = vals().fold(reference.unwrap_or(0.0), |a, &b| a.max(b));
    let step = nice_step(max, 5.0);
    let top = (max / step).ceil().max(1.0) * step;
    let w = WIDTH - left - RIGHT;
    let xs = |v: f64| left + v.max(0.0) / top * w;
    let mut t = 0.0;
    while t <= top + step * 0.01 {
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#eeeeee\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            TOP + plot_h,
            TOP + plot_h + 14.0,
            esc(&fmt_num(t)),
            x = xs(t)
        );
        t += step;
    }
    let _ = write!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
         <line x1=\"{left:.1}\" y1=\"{TOP}\" x2=\"{left:.1}\" y2=\"{:.1}\" stroke=\"#333333\"/>",
        left + w / 2.0,
        TOP + plot_h + 30.0,
        esc(x_label),
        TOP + plot_h
    );
    let bh = (row - 6.0) / series.len().max(1) as f64;
    for (ci, c) in categories.iter().enumerate() {
        let gy = TOP + ci as f64 * row + 3.0;
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 4.0,
            gy + (row - 6.0) / 2.0 + 4.0,
            esc(c)
        );
        for (si, (name, v)) in series.iter().enumerate() {
            let Some(&val) = v.get(ci) else { continue };
            if !(val.is_finite() && val > 0.0) {
                continue;
            }
            let _ = write!(
                out,
                "<rect class=\"bar\" data-series=\"{}\" x=\"{left:.1}\" y=\"{:.1}\" \
                 width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}: {}</title></rect>",
                esc(name),
                gy + si as f64 * bh,
                (xs(val) - left).max(1.0),
                bh.max(1.0),
                PALETTE[si % PALETTE.len()],
                esc(name),
                esc(&trim(val))
            );
        }
    }
    if let Some(r) = reference {
        let _ = write!(
            out,
            "<line class=\"reference\" x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\" \
             stroke=\"#333333\" stroke-dasharray=\"4 3\"/>",
            TOP + plot_h,
            x = xs(r)
        );
    }
    out.push_str("<g class=\"legend\">");
    for (i, (n, _)) in series.iter().enumerate() {
        let y = TOP + plot_h + 52.0 + 16.0 * i as f64;
        let _ = write!(
            out,
            "<rect x=\"{left:.1}\" y=\"{:.1}\" width=\"12\" height=\"10\" fill=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{y:.1}\">{}</text>",
            y - 9.0,
            PALETTE[i % PALETTE.len()],
            left + 16.0,
            esc(n)
        );
    }
    out.push_str("</g>");
    out.push_str("</svg>");
    out
}
