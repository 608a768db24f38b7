//! Reads `talus sysbench --results` and `talus tpcc --results` folders for `talus report` and
//! `talus sysbench summary`: `run.json`, `summary.csv` and every `*.intervals.csv`, kept as
//! generic columns (the tools document theirs). Untrusted text: a malformed row is skipped
//! and counted in the warnings, never a panic.

use std::collections::BTreeMap;
use std::path::Path;

use super::csv::parse_csv;

/// One sysbench or tpcc run (one `run.json` folder).
#[derive(Debug, Clone, Default)]
pub struct OltpRun {
    /// The folder's path under the results dir (or the engine for the dir itself).
    pub name: String,
    /// `engine` from run.json.
    pub engine: String,
    /// `command_line`, joined by spaces.
    pub command_line: String,
    /// `options` from run.json.
    pub options: BTreeMap<String, String>,
    /// `summary.csv` rows.
    pub rows: Vec<BTreeMap<String, String>>,
    /// `<name>.intervals.csv` by name, each row's numeric columns.
    pub intervals: BTreeMap<String, Vec<BTreeMap<String, f64>>>,
}

impl OltpRun {
    /// Option `name` as a number.
    pub fn option_num(&self, name: &str) -> Option<f64> {
        self.options.get(name)?.parse().ok()
    }

    /// Column `col` of the summary row whose `key` column is `value`, as a number.
    pub fn num(&self, key: &str, value: &str, col: &str) -> Option<f64> {
        let r = self.rows.iter().rev().find(|r| r.get(key).map(String::as_str) == Some(value))?;
        r.get(col)?.parse::<f64>().ok().filter(|v| v.is_finite())
    }

    /// A series of the intervals file `name`: (x column, y column) points.
    pub fn series(&self, name: &str, x: &str, y: &str) -> Vec<(f64, f64)> {
        self.intervals
            .get(name)
            .map(|rows| rows.iter().filter_map(|r| Some((*r.get(x)?, *r.get(y)?))).collect())
            .unwrap_or_default()
    }
}

/// Loads the run in `dir` whose run.json is `json`; `name` is its display name.
pub fn load_oltp(dir: &Path, name: String, json: &serde_json::Value) -> (OltpRun, Vec<String>) {
    let mut warnings = Vec::new();
    let s = |k: &str| json.get(k).and_then(|v| v.as_str()).unwrap_or("?").to_string();
    let mut run = OltpRun { name, engine: s("engine"), ..OltpRun::default() };
    if let Some(a) = json.get("command_line").and_then(|v| v.as_array()) {
        run.command_line = a.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>().join(" ");
    }
    if let Some(o) = json.get("options").and_then(|v| v.as_object()) {
        for (k, v) in o {
            if let Some(v) = v.as_str() {
                run.options.insert(k.clone(), v.to_string());
            }
        }
    }
    let summary = dir.join("summary.csv");
    match std::fs::read_to_string(&summary) {
        Ok(text) => {
            let (rows, bad) = parse_csv(&text);
            if bad > 0 {
                warnings.push(format!("{}: {bad} malformed rows skipped", summary.display()));
            }
            run.rows = rows;
        }
        Err(e) => warnings.push(format!("{}: {e}", summary.display())),
    }
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    for p in files {
        let Some(fname) = p.file_name().and_then(|f| f.to_str()) else { continue };
        let Some(stem) = fname.strip_suffix(".intervals.csv") else { continue };
        let Ok(text) = std::fs::read_to_string(&p) else {
            warnings.push(format!("{}: unreadable", p.display()));
            continue;
        };
        let (rows, mut bad) = parse_csv(&text);
        let mut points = Vec::new();
        for r in rows {
            // Empty cells (a column the engine could not give) are left out; the engine's
            // stall state is drawn as a level (none 0, delayed 1, stopped 2).
            let vals: Option<BTreeMap<String, f64>> = r
                .into_iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| {
                    let x = match (k.as_str(), v.as_str()) {
                        ("stall", "none") => 0.0,
                        ("stall", "delayed") => 1.0,
                        ("stall", "stopped") => 2.0,
                        _ => v.parse::<f64>().ok().filter(|x| x.is_finite())?,
                    };
                    Some((k, x))
                })
                .collect();
            match vals {
                Some(v) => points.push(v),
                None => bad += 1,
            }
        }
        if bad > 0 {
            warnings.push(format!("{}: {bad} malformed rows skipped", p.display()));
        }
        run.intervals.insert(stem.to_string(), points);
    }
    (run, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_run_and_skips_bad_rows() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("summary.csv"), "test,tps\npoint-query,100.5\nx\n").unwrap();
        std::fs::write(dir.path().join("scan.intervals.csv"), "elapsed_s,tps\n1,2\n2,abc\n3,4\n")
            .unwrap();
        let json = serde_json::json!({"tool": "talus sysbench", "engine": "talus",
            "command_line": ["talus", "sysbench"], "options": {"threads": "2"}});
        let (run, w) = load_oltp(dir.path(), "r".into(), &json);
        assert_eq!(run.num("test", "point-query", "tps"), Some(100.5));
        assert_eq!(run.option_num("threads"), Some(2.0));
        assert_eq!(run.series("scan", "elapsed_s", "tps"), vec![(1.0, 2.0), (3.0, 4.0)]);
        assert_eq!(w.len(), 2, "{w:?}");
    }
}
