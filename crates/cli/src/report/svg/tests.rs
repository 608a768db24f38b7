//! Tests of the SVG charts: escaping, point placement, bars, ratio bars, horizontal bars and
//! legend wrapping, read back from the markup the report's tests rely on.

use super::*;

/// The number in the first ` NAME="..."` attribute of `elem` (an element's markup, or a
/// whole chart: its root's `height`).
fn attr(elem: &str, name: &str) -> f64 {
    elem.split(&format!(" {name}=\"")).nth(1).unwrap().split('"').next().unwrap().parse().unwrap()
}

/// The `y` of every legend entry's text, in order.
fn legend_text_ys(chart: &str) -> Vec<f64> {
    let legend = chart.split("<g class=\"legend\">").nth(1).unwrap();
    legend.split("<text x=").skip(1).map(|t| attr(t, "y")).collect()
}

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
    let s = line_chart("t", "x", "y", &[one(vec![(5.0, 3.0)]), one(vec![(1.0, 1.0), (5.0, 2.0)])]);
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
    let s =
        hbar_chart("t", "x", &cats, &[("a".into(), vals(0.5)), ("b".into(), vals(1.0))], Some(1.0));
    let h = attr(&s, "height");
    assert!(h > HEIGHT, "grows with its categories: {h}");
    assert_eq!(s.matches("<rect class=\"bar\"").count(), 24);
    for bar in s.split("<rect class=\"bar\"").skip(1) {
        let attr = |n: &str| attr(bar, n);
        assert!(attr("y") >= TOP && attr("y") + attr("height") <= h - 40.0, "{bar}");
        assert!(attr("x") + attr("width") <= WIDTH - RIGHT + 0.01, "{bar}");
    }
    // One legend line per series, each below the x axis label and inside the chart.
    let ys = legend_text_ys(&s);
    assert_eq!(ys.len(), 2);
    let axis_label_y = h - 40.0 - 16.0 * 2.0 + 30.0;
    assert!(ys[0] > axis_label_y + 10.0 && ys[1] > ys[0] + 10.0 && ys[1] < h, "{ys:?}");
    assert!(s.contains("class=\"reference\""));
    assert!(hbar_chart("t", "x", &[], &[], None).contains("class=\"nodata\""));
}

#[test]
fn bars_and_empty_charts() {
    let s = bar_chart("t", "y", &["a".into(), "b".into()], &[("e".into(), vec![1.0, 2.0])], false);
    assert_eq!(s.matches("<rect class=\"bar\"").count(), 2);
    assert!(bar_chart("t", "y", &[], &[], false).contains("class=\"nodata\""));
    let s = bar_chart("t", "y", &["a".into(), "b".into()], &[("e".into(), vec![1.0, 1e6])], true);
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

/// Many series (sysbench's 16 per group): the legend's rows all lie below the plot and its x
/// labels, inside a chart grown to hold them (fails with the rows stacked upwards: they
/// covered the bars).
#[test]
fn many_legend_rows_grow_the_chart_below_the_plot() {
    let names: Vec<(String, Vec<f64>)> =
        (0..16).map(|i| (format!("sb_points-notcovered-si_{i}.pre"), vec![1.0, 1.1])).collect();
    let s = ratio_chart("t", &["a".into(), "b".into()], &names);
    let h = attr(&s, "height");
    assert!(h > HEIGHT, "grown: {h}");
    assert!(s.contains(&format!("viewBox=\"0 0 {WIDTH} {h}\"")));
    let ys = legend_text_ys(&s);
    assert_eq!(ys.len(), 16);
    assert!(ys.iter().all(|&y| y >= HEIGHT - 12.0 && y < h), "{ys:?} in {h}");
    // Every bar ends above the legend's first row.
    for bar in s.split("<rect class=\"bar\"").skip(1) {
        let attr = |n: &str| attr(bar, n);
        assert!(attr("y") + attr("height") < HEIGHT - 12.0 - 10.0, "{bar}");
    }
}
