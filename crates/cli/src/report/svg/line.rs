//! [`line_chart`]: one polyline per series (a marked point for a one-point series) on the
//! frame of [`super`] (its axes, ticks and legend). A pure function, no IO; called by the
//! report's pages through `svg::line_chart`.

use std::fmt::Write;

use super::{
    esc, fmt_num, legend, nice_step, nodata, open, y_axis, Series, BOTTOM, HEIGHT, LEFT, PALETTE,
    RIGHT, TOP, WIDTH,
};

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
