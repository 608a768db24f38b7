//! The configuration sweep (`bench/ibench_configs.sh`), shown as reference post 000 shows its
//! configurations: one table per step with one row per configuration, each number followed by
//! its ratio to the base configuration (the run named `base`, else the first). Only drawn when
//! two or more runs share a step; the per-interval insert-rate and max-response charts with
//! one line per configuration are the step sections of [`super::page`]. Pure function.

use std::fmt::Write;

use super::cell::cell;
use super::load::Run;
use super::svg::esc;

/// (csv column, header, scale, higher is better).
const COLS: [(&str, &str, f64, bool); 12] = [
    ("ips", "ips", 1.0, true),
    ("qps", "qps", 1.0, true),
    ("ins_max_us", "ins max ms", 0.001, false),
    ("w_amp", "W-Amp", 1.0, false),
    ("comp_write_gb", "comp write GB", 1.0, false),
    ("l0_base_avg_sec", "L0->base Avg(sec)", 1.0, false),
    ("l0_base_count", "L0->base cnt", 1.0, false),
    ("stall_pct", "stall %", 1.0, false),
    ("stalls_level0_slowdown", "L0 slowdowns", 1.0, false),
    ("stalls_level0_numfiles", "L0 stops", 1.0, false),
    ("peak_rss_kb", "peak RSS MB", 1.0 / 1024.0, false),
    ("peak_vsz_kb", "peak VSZ MB", 1.0 / 1024.0, false),
];

/// Appends the sweep tables for `steps` if at least two runs have a step.
pub fn section(runs: &[Run], steps: &[String], h: &mut String) {
    if runs.len() < 2 {
        return;
    }
    let base = runs.iter().find(|r| r.name == "base").unwrap_or(&runs[0]);
    let _ = write!(
        h,
        "<h2 id=\"sweep\">Configuration sweep</h2>\n<p>One row per configuration; in \
         parentheses the ratio to <em>{}</em> (red: worse by more than 5%). W-Amp and comp write \
         GB are the step's interval, L0->base Avg(sec) and the stall counts are cumulative since \
         l.i0, peak RSS/VSZ are the step's.</p>\n",
        esc(&base.name)
    );
    for step in steps {
        let with: Vec<&Run> = runs.iter().filter(|r| r.step(step).is_some()).collect();
        if with.len() < 2 {
            continue;
        }
        let _ = write!(
            h,
            "<h3>{}</h3><table class=\"sweep\"><tr><th class=\"name\">config</th>",
            esc(step)
        );
        for (_, head, _, _) in COLS {
            let _ = write!(h, "<th>{}</th>", esc(head));
        }
        h.push_str("</tr>");
        for r in with {
            let _ = write!(h, "<tr><td class=\"name\">{}</td>", esc(&r.name));
            for (col, _, scale, higher_better) in COLS {
                let v = r.num(step, col);
                let b = base.num(step, col);
                let (text, worse) = match (v, b) {
                    (Some(v), Some(b)) if b != 0.0 => {
                        let ratio = v / b;
                        let worse =
                            if higher_better { ratio < 0.95 } else { ratio > 1.05 && v - b > 1e-3 };
                        (format!("{} ({ratio:.2})", cell(Some(v * scale))), worse)
                    }
                    (v, _) => (cell(v.map(|v| v * scale)), false),
                };
                let class = if worse { " class=\"worse\"" } else { "" };
                let _ = write!(h, "<td{class}>{text}</td>");
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>\n");
    }
}
