//! Reads what `talus report` draws: sysbench and tpcc result folders (`oltp_load`), ibench
//! result folders (`run.json`, `summary.csv`, `<step>.intervals.csv`, as written by
//! `talus ibench --results`), db_bench stdout logs
//! (`*.log`: `name : X micros/op Y ops/sec ...` lines and the `** Compaction Stats [..] **`
//! table) and `bench/regress.py` results (`regress.json`, parsed by [`super::regress`]).
//!
//! Every file is untrusted text: a malformed line or value is skipped and counted in
//! [`Loaded::warnings`], never a panic. Folders are searched to a depth of 3. Called once by
//! [`super::run`]; no shared state.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::csv::parse_csv;
use super::oltp_load::{load_oltp, OltpRun};

/// One ibench run (one `run.json` folder).
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Display name: the folder's path under the results dir (or the engine for the dir itself).
    pub name: String,
    /// `engine` from run.json.
    pub engine: String,
    /// `command_line` from run.json, joined by spaces.
    pub command_line: String,
    /// `options` from run.json (flag name to value as a string).
    pub options: BTreeMap<String, String>,
    /// summary.csv rows, each column name to value, in file order.
    pub steps: Vec<BTreeMap<String, String>>,
    /// Interval rows per step: `[elapsed_s, ips, qps, max_insert_ms, max_query_ms]`.
    pub intervals: BTreeMap<String, Vec<[f64; 5]>>,
    /// The engine's state per interval, per step: `(elapsed_s, column, value)` for every
    /// non-empty engine-state cell ([`crate::engine_state`]; the stall state as 0, 1, 2).
    pub state: BTreeMap<String, Vec<(f64, String, f64)>>,
    /// Deletes/s and each client's inserts/s per interval, per step: `(elapsed_s, column,
    /// value)` for the `dps` and `ips_c<N>` cells (files written before they existed: none).
    pub rates: BTreeMap<String, Vec<(f64, String, f64)>>,
}

impl Run {
    /// The summary row of `step`.
    pub fn step(&self, step: &str) -> Option<&BTreeMap<String, String>> {
        self.steps.iter().find(|r| r.get("step").map(String::as_str) == Some(step))
    }

    /// Column `col` of `step` as a number.
    pub fn num(&self, step: &str, col: &str) -> Option<f64> {
        self.step(step)?.get(col)?.parse::<f64>().ok().filter(|v| v.is_finite())
    }
}

/// One db_bench result line.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchLine {
    /// Benchmark name (`fillrandom`).
    pub name: String,
    /// micros/op.
    pub micros_per_op: f64,
    /// ops/sec.
    pub ops_per_sec: f64,
}

/// One db_bench log.
#[derive(Debug, Clone, Default)]
pub struct BenchLog {
    /// The log's path under the results dir.
    pub name: String,
    /// Result lines in order.
    pub results: Vec<BenchLine>,
    /// The last compaction stats table (header, separator, rows), verbatim.
    pub compaction_stats: Vec<String>,
}

/// Everything found under the results dir.
#[derive(Debug, Default)]
pub struct Loaded {
    /// ibench runs, by folder name.
    pub runs: Vec<Run>,
    /// `talus sysbench` runs, by folder name.
    pub sysbench: Vec<OltpRun>,
    /// `talus tpcc` runs, by folder name.
    pub tpcc: Vec<OltpRun>,
    /// db_bench logs.
    pub logs: Vec<BenchLog>,
    /// regress.py results.
    pub regress: Vec<super::regress::Regress>,
    /// Things skipped, for stderr.
    pub warnings: Vec<String>,
}

/// Loads `dir`.
pub fn load(dir: &Path) -> Result<Loaded, String> {
    if !dir.is_dir() {
        return Err(format!("--results={} is not a directory", dir.display()));
    }
    let mut out = Loaded::default();
    walk(dir, dir, 0, &mut out);
    out.runs.sort_by(|a, b| a.name.cmp(&b.name));
    out.sysbench.sort_by(|a, b| a.name.cmp(&b.name));
    out.tpcc.sort_by(|a, b| a.name.cmp(&b.name));
    out.logs.sort_by(|a, b| a.name.cmp(&b.name));
    out.regress.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}

fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Loaded) {
    if dir.join("run.json").is_file() {
        match load_json(&dir.join("run.json")) {
            Ok(json) => match json.get("tool").and_then(|t| t.as_str()) {
                Some(tool @ ("talus sysbench" | "talus tpcc")) => {
                    let name = match rel(root, dir) {
                        n if n.is_empty() => {
                            json.get("engine").and_then(|e| e.as_str()).unwrap_or("?").to_string()
                        }
                        n => n,
                    };
                    let (run, mut w) = load_oltp(dir, name, &json);
                    if tool == "talus sysbench" {
                        out.sysbench.push(run);
                    } else {
                        out.tpcc.push(run);
                    }
                    out.warnings.append(&mut w);
                }
                _ => match load_run(root, dir) {
                    Ok((run, mut w)) => {
                        out.runs.push(run);
                        out.warnings.append(&mut w);
                    }
                    Err(e) => out.warnings.push(e),
                },
            },
            Err(e) => out.warnings.push(e),
        }
    }
    let regress = dir.join("regress.json");
    if regress.is_file() {
        let name = match rel(root, dir) {
            n if n.is_empty() => "regress".to_string(),
            n => n,
        };
        match std::fs::read_to_string(&regress) {
            Ok(text) => match super::regress::parse(&name, &text) {
                Ok(r) => out.regress.push(r),
                Err(e) => out.warnings.push(format!("{}: {e}", regress.display())),
            },
            Err(e) => out.warnings.push(format!("{}: {e}", regress.display())),
        }
    }
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() && depth < 3 {
            walk(root, &p, depth + 1, out);
        } else if p.extension().and_then(|e| e.to_str()) == Some("log") && p.is_file() {
            match std::fs::read(&p) {
                Ok(bytes) => {
                    let log = parse_log(&rel(root, &p), &String::from_utf8_lossy(&bytes));
                    if log.results.is_empty() && log.compaction_stats.is_empty() {
                        out.warnings.push(format!("{}: no db_bench results", p.display()));
                    } else {
                        out.logs.push(log);
                    }
                }
                Err(e) => out.warnings.push(format!("{}: {e}", p.display())),
            }
        }
    }
}

fn load_json(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn load_run(root: &Path, dir: &Path) -> Result<(Run, Vec<String>), String> {
    let mut warnings = Vec::new();
    let path = dir.join("run.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let engine = json.get("engine").and_then(|v| v.as_str()).unwrap_or("?").to_string();
    let command_line = match json.get("command_line").and_then(|v| v.as_array()) {
        Some(a) => a.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>().join(" "),
        None => String::new(),
    };
    let name = match rel(root, dir) {
        n if n.is_empty() => engine.clone(),
        n => n,
    };
    let options = json
        .get("options")
        .and_then(|v| v.as_object())
        .map(|o| o.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect())
        .unwrap_or_default();
    let mut run = Run { name, engine, command_line, options, ..Run::default() };
    let summary = dir.join("summary.csv");
    match std::fs::read_to_string(&summary) {
        Ok(text) => {
            let (rows, bad) = parse_csv(&text);
            if bad > 0 {
                warnings.push(format!("{}: {bad} malformed rows skipped", summary.display()));
            }
            run.steps = rows;
        }
        Err(e) => warnings.push(format!("{}: {e}", summary.display())),
    }
    for row in &run.steps {
        let Some(step) = row.get("step") else { continue };
        let path = dir.join(format!("{step}.intervals.csv"));
        let Ok(text) = std::fs::read_to_string(&path) else {
            warnings.push(format!("{}: missing", path.display()));
            continue;
        };
        let (rows, mut bad) = parse_csv(&text);
        let mut points = Vec::new();
        let mut state = Vec::new();
        let mut rates = Vec::new();
        for r in rows {
            if let Some(t) = r.get("elapsed_s").and_then(|v| v.parse::<f64>().ok()) {
                for (col, v) in &r {
                    let is_client =
                        col.strip_prefix("ips_c").is_some_and(|n| n.parse::<u32>().is_ok());
                    if col != "dps" && !is_client {
                        continue;
                    }
                    if let Some(x) = v.parse::<f64>().ok().filter(|x| x.is_finite()) {
                        rates.push((t, col.clone(), x));
                    }
                }
                for col in crate::engine_state::HEADER.split(',') {
                    let v = match r.get(col).map(String::as_str) {
                        None | Some("") => continue,
                        Some("none") => 0.0,
                        Some("delayed") => 1.0,
                        Some("stopped") => 2.0,
                        Some(v) => match v.parse::<f64>() {
                            Ok(x) if x.is_finite() => x,
                            _ => continue,
                        },
                    };
                    state.push((t, col.to_string(), v));
                }
            }
            let cols = ["elapsed_s", "ips", "qps", "max_insert_ms", "max_query_ms"];
            let vals: Vec<f64> = cols
                .iter()
                .filter_map(|c| r.get(*c)?.parse::<f64>().ok().filter(|v| v.is_finite()))
                .collect();
            match <[f64; 5]>::try_from(vals) {
                Ok(v) => points.push(v),
                Err(_) => bad += 1,
            }
        }
        if bad > 0 {
            warnings.push(format!("{}: {bad} malformed rows skipped", path.display()));
        }
        run.intervals.insert(step.clone(), points);
        run.state.insert(step.clone(), state);
        run.rates.insert(step.clone(), rates);
    }
    Ok((run, warnings))
}

/// Parses one db_bench line (`fillrandom   :   3.259 micros/op 306817 ops/sec ...`).
pub fn parse_bench_line(line: &str) -> Option<BenchLine> {
    let (name, rest) = line.split_once(':')?;
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let toks: Vec<&str> = rest.split_whitespace().collect();
    let before = |unit: &str| {
        let i = toks.iter().position(|t| *t == unit)?;
        toks.get(i.checked_sub(1)?)?.parse::<f64>().ok().filter(|v| v.is_finite())
    };
    Some(BenchLine {
        name: name.to_string(),
        micros_per_op: before("micros/op")?,
        ops_per_sec: before("ops/sec")?,
    })
}

/// Parses a db_bench log: the result lines and the last per-level compaction stats table.
pub fn parse_log(name: &str, text: &str) -> BenchLog {
    let mut log = BenchLog { name: name.to_string(), ..BenchLog::default() };
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(b) = parse_bench_line(l) {
            log.results.push(b);
        } else if l.trim_start().starts_with("** Compaction Stats [") {
            let mut table = Vec::new();
            let mut j = i + 1;
            while j < lines.len() && j < i + 64 {
                let t = lines[j];
                if t.trim().is_empty() || t.trim_start().starts_with("**") {
                    break;
                }
                table.push(t.to_string());
                j += 1;
            }
            if table.first().is_some_and(|h| h.trim_start().starts_with("Level")) {
                log.compaction_stats = table;
            }
            i = j;
            continue;
        }
        i += 1;
    }
    log
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_lines() {
        let b = parse_bench_line(
            "fillrandom   :       3.259 micros/op 306817 ops/sec 30.6 seconds 10000000 operations;",
        )
        .unwrap();
        assert_eq!(b.name, "fillrandom");
        assert_eq!((b.micros_per_op, b.ops_per_sec), (3.259, 306817.0));
        assert!(parse_bench_line("Keys:       16 bytes each").is_none());
        assert!(parse_bench_line("fill random : 1 micros/op 2 ops/sec").is_none());
        assert!(parse_bench_line("x : nan micros/op 2 ops/sec").is_none());
    }

    #[test]
    fn log_keeps_last_level_table() {
        let text = "fillseq : 1.0 micros/op 1000000 ops/sec\n\n** Compaction Stats [default] **\n\
                    Level Files Size\n-----\n  L0 1/0 1 MB\n Sum 1/0 1 MB\n\n\
                    ** Compaction Stats [default] **\nPriority Files\n----\n\n\
                    ** Compaction Stats [default] **\nLevel Files Size\n-----\n  L0 2/0 2 MB\n";
        let log = parse_log("a.log", text);
        assert_eq!(log.results.len(), 1);
        assert_eq!(log.compaction_stats, vec!["Level Files Size", "-----", "  L0 2/0 2 MB"]);
    }

    #[test]
    fn csv_skips_ragged_rows() {
        let (rows, bad) = parse_csv("a,b\n1,2\n3\n4,5,6\n7,8\n");
        assert_eq!(rows.len(), 2);
        assert_eq!(bad, 2);
        assert_eq!(rows[1]["b"], "8");
    }
}
