//! A small SVG writer for the report: line charts (one polyline per series) and grouped bar
//! charts, with axes, ticks, a title and a legend. Output is a self-contained `<svg>` element
//! to inline in HTML; every piece of text goes through [`esc`]. Pure functions, no IO.
//!
//! Structure the tests rely on: the root is `<svg class="chart" data-kind="line|bar">`, each
//! series of a line chart is one `<polyline class="series" data-series=NAME>`, each bar is a
//! `<rect class="bar" data-series=NAME>` with positive height, legend entries are in
//! `<g class="legend">`, and a chart without data says so in `<text class="nodata">`.

use std::fmt::Write;

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

/// The legend: entries left to right, wrapping onto more rows (stacked upwards from the
/// bottom edge) when a row would run past the chart's right edge.
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
    out.push_str("<g class=\"legend\">");
    let n_rows = rows.len();
    for (r, row) in rows.iter().enumerate() {
        let y = HEIGHT - 12.0 - 13.0 * (n_rows - 1 - r) as f64;
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

/// A line chart of `series` (x from the smallest to the largest x of all points, y from 0).
pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let mut out = String::new();
    open("line", title, &mut out);
    let pts = || {
        series.iter().flat_map(|s| s.points.iter()).filter(|p| p.0.is_finite() && p.1.is_finite())
    };
    if pts().next().is_none() {
        nodata(&mut out);
        return out;
    }
    let xmin = pts().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let mut xmax = pts().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    if xmax <= xmin {
        xmax = xmin + 1.0;
    }
    let ymax = pts().map(|p| p.1).fold(0.0, f64::max);
    let top = y_axis(ymax, y_label, false, &mut out);
    let (w, h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let xs = |x: f64| LEFT + (x - xmin) / (xmax - xmin) * w;
    let ys = |y: f64| TOP + h - (y.max(0.0) / top) * h;
    let step = nice_step(xmax - xmin, 6.0);
    let mut t = (xmin / step).ceil() * step;
    while t <= xmax + step * 0.01 {
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            xs(t),
            TOP + h + 14.0,
            esc(&fmt_num(t))
        );
        t += step;
    }
    let _ = write!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        LEFT + w / 2.0,
        TOP + h + 30.0,
        esc(x_label)
    );
    for (i, s) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let mut points = String::new();
        for &(x, y) in s.points.iter().filter(|p| p.0.is_finite() && p.1.is_finite()) {
            let _ = write!(points, "{:.1},{:.1} ", xs(x), ys(y));
        }
        let _ = write!(
            out,
            "<polyline class=\"series\" data-series=\"{}\" fill=\"none\" stroke=\"{color}\" \
             stroke-width=\"2\" points=\"{}\"/>",
            esc(&s.name),
            points.trim_end()
        );
        // A one-point polyline draws nothing in a browser (a 10 s sysbench test reporting
        // every 5 s has one interval): mark the point.
        if let [(x, y)] = s.points[..] {
            if x.is_finite() && y.is_finite() {
                let _ = write!(
                    out,
                    "<circle class=\"point\" data-series=\"{}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" \
                     fill=\"{color}\"/>",
                    esc(&s.name),
                    xs(x),
                    ys(y)
                );
            }
        }
    }
    legend(&series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), &mut out);
    out.push_str("</svg>");
    out
}

/// A count on a log axis: 0 stays 0, `v >= 1` becomes `log10(v) + 1` (so 1 is one unit up).
pub fn log_units(v: f64) -> f64 {
    if v >= 1.0 {
        v.log10() + 1.0
    } else {
        0.0
    }
}

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
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            gx + group * 0.4,
            TOP + h + 14.0,
            esc(c)
        );
    }
    legend(&series.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(), &mut out);
    out.push_str("</svg>");
    out
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
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            gx + group * 0.4,
            TOP + h + 14.0,
            esc(c)
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_everything_it_is_given() {
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        let s = line_chart(
            "<t>",
            "x",
            "y",
            &[Series { name: "a&b".into(), points: vec![(0.0, 1.0), (1.0, 2.0)] }],
        );
        assert!(s.contains("&lt;t&gt;") && s.contains("a&amp;b") && !s.contains("<t>"));
    }

    #[test]
    fn a_one_point_series_is_marked() {
        let one = |points| Series { name: "a".into(), points };
        let s =
            line_chart("t", "x", "y", &[one(vec![(5.0, 3.0)]), one(vec![(1.0, 1.0), (5.0, 2.0)])]);
        assert_eq!(s.matches("<circle class=\"point\"").count(), 1, "{s}");
        assert_eq!(s.matches("<polyline class=\"series\"").count(), 2);
    }

    #[test]
    fn line_chart_maps_points_inside_the_plot() {
        let s = line_chart(
            "t",
            "x",
            "y",
            &[Series { name: "a".into(), points: vec![(1.0, 0.0), (3.0, 10.0)] }],
        );
        let pts = s.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
        let p: Vec<(f64, f64)> = pts
            .split(' ')
            .map(|xy| {
                let (x, y) = xy.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0], (LEFT, HEIGHT - BOTTOM));
        assert_eq!(p[1].0, WIDTH - RIGHT);
        assert!(p[1].1 >= TOP && p[1].1 < HEIGHT - BOTTOM);
    }

    #[test]
    fn horizontal_bars_fit_their_chart() {
        let cats: Vec<String> = (0..12).map(|i| format!("range-covered-si.range{i}")).collect();
        let vals = |k: f64| (0..12).map(|i| k + i as f64 / 10.0).collect::<Vec<_>>();
        let s = hbar_chart(
            "t",
            "x",
            &cats,
            &[("a".into(), vals(0.5)), ("b".into(), vals(1.0))],
            Some(1.0),
        );
        let h: f64 =
            s.split("height=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(h > HEIGHT, "grows with its categories: {h}");
        assert_eq!(s.matches("<rect class=\"bar\"").count(), 24);
        for bar in s.split("<rect class=\"bar\"").skip(1) {
            let attr = |n: &str| -> f64 {
                bar.split(&format!(" {n}=\""))
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            assert!(attr("y") >= TOP && attr("y") + attr("height") <= h - 40.0, "{bar}");
            assert!(attr("x") + attr("width") <= WIDTH - RIGHT + 0.01, "{bar}");
        }
        // One legend line per series, each below the x axis label and inside the chart.
        let legend = s.split("<g class=\"legend\">").nth(1).unwrap();
        let ys: Vec<f64> = legend
            .split("<text x=")
            .skip(1)
            .map(|t| t.split(" y=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(ys.len(), 2);
        let axis_label_y = h - 40.0 - 16.0 * 2.0 + 30.0;
        assert!(ys[0] > axis_label_y + 10.0 && ys[1] > ys[0] + 10.0 && ys[1] < h, "{ys:?}");
        assert!(s.contains("class=\"reference\""));
        assert!(hbar_chart("t", "x", &[], &[], None).contains("class=\"nodata\""));
    }

    #[test]
    fn bars_and_empty_charts() {
        let s =
            bar_chart("t", "y", &["a".into(), "b".into()], &[("e".into(), vec![1.0, 2.0])], false);
        assert_eq!(s.matches("<rect class=\"bar\"").count(), 2);
        assert!(bar_chart("t", "y", &[], &[], false).contains("class=\"nodata\""));
        let s =
            bar_chart("t", "y", &["a".into(), "b".into()], &[("e".into(), vec![1.0, 1e6])], true);
        assert!(s.contains(">1M<") && s.contains(">100k<"), "log axis labels: {s}");
        assert_eq!((log_units(0.0), log_units(1.0), log_units(100.0)), (0.0, 1.0, 3.0));
        assert!(line_chart("t", "x", "y", &[]).contains("class=\"nodata\""));
        assert_eq!(nice_step(100.0, 5.0), 20.0);
        assert_eq!(fmt_num(25_000.0), "25k");
        assert_eq!(fmt_num(0.5), "0.5");
    }

    #[test]
    fn ratio_bars_start_at_one() {
        let s = ratio_chart(
            "t",
            &["v1".into(), "v2".into()],
            &[("a".into(), vec![1.1, 0.9]), ("b".into(), vec![1.0, 0.0])],
        );
        let rects: Vec<(f64, f64)> = s
            .split("<rect class=\"bar\"")
            .skip(1)
            .map(|r| {
                let get = |k: &str| -> f64 {
                    r.split(&format!(" {k}=\""))
                        .nth(1)
                        .unwrap()
                        .split('"')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap()
                };
                (get("y"), get("height"))
            })
            .collect();
        assert_eq!(rects.len(), 3, "a missing value draws no bar");
        let line: f64 = s
            .split("class=\"reference\"")
            .nth(1)
            .unwrap()
            .split("y1=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        // 1.1 ends above the line, 0.9 starts at it and goes down, 1.0 is a 1-pixel bar at it.
        assert!((rects[0].0 + rects[0].1 - line).abs() < 0.2 && rects[0].1 > 10.0);
        assert!((rects[2].0 - line).abs() < 0.2 && rects[2].1 > 10.0);
        assert!((rects[1].1 - 1.0).abs() < 1e-9);
        assert!((rects[0].1 - rects[2].1).abs() < 0.2, "+10% and -10% are equally long");
        assert!(!s.contains(">0<"), "the axis does not start at 0 for ratios near 1: {s}");
    }

    #[test]
    fn long_legends_wrap_inside_the_chart() {
        let names: Vec<(String, Vec<f64>)> =
            (0..4).map(|i| (format!("readrandom_clock_{i}M_long"), vec![1.0])).collect();
        let s = ratio_chart("t", &["v".into()], &names);
        let legend = s.split("<g class=\"legend\">").nth(1).unwrap();
        let xs: Vec<f64> = legend
            .split("<text x=\"")
            .skip(1)
            .map(|t| t.split('"').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(xs.len(), 4);
        // Each name is 24 characters, about 170 px: at most three fit on a 560 px row.
        assert!(xs.iter().all(|x| x + 7.0 * 24.0 <= WIDTH + 24.0), "{xs:?}");
        assert!(xs.iter().filter(|x| **x == LEFT + 16.0).count() >= 2, "wrapped: {xs:?}");
    }
}
