//! Writes `--results=DIR`: `run.json`, `summary.csv` (one row per step, appended as steps end)
//! and `<step>.intervals.csv`. Column meanings are in the module doc of [`super`]. Called by
//! [`super::run`] from the main thread only.

use std::io::Write;
use std::path::Path;

use super::config::{describe, Config};
use super::summary::{IntervalRow, Summary, INTERVAL_HEADER};

fn io(path: &Path, e: std::io::Error) -> String {
    format!("results: {}: {e}", path.display())
}

/// Creates `dir` and writes `run.json` (command line, engine, every option).
pub fn write_run(dir: &Path, cfg: &Config, argv: &[String]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut options = serde_json::Map::new();
    for (k, v) in describe(cfg) {
        options.insert(k.to_string(), serde_json::Value::String(v));
    }
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut cmd = vec!["talus".to_string(), "ibench".to_string()];
    cmd.extend(argv.iter().cloned());
    let run = serde_json::json!({
        "tool": "talus ibench",
        "format_version": 1,
        "engine": cfg.engine.name(),
        "command_line": cmd,
        "options": options,
        "started_unix": started,
    });
    let path = dir.join("run.json");
    let text = serde_json::to_string_pretty(&run).map_err(|e| format!("results: json: {e}"))?;
    std::fs::write(&path, text + "\n").map_err(|e| io(&path, e))?;
    // A rerun into the same folder starts a new summary.
    let summary = dir.join("summary.csv");
    match std::fs::remove_file(&summary) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(&summary, e)),
        _ => Ok(()),
    }
}

/// Appends the step's summary row to `summary.csv` (with the header first) and writes
/// `<step>.intervals.csv`.
pub fn write_step(dir: &Path, s: &Summary, intervals: &[IntervalRow]) -> Result<(), String> {
    let cols = s.columns();
    let path = dir.join("summary.csv");
    let new = !path.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| io(&path, e))?;
    let mut text = String::new();
    if new {
        text.push_str(&cols.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(","));
        text.push('\n');
    }
    text.push_str(&cols.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>().join(","));
    text.push('\n');
    f.write_all(text.as_bytes()).map_err(|e| io(&path, e))?;

    let path = dir.join(format!("{}.intervals.csv", s.step));
    let mut text = String::from(INTERVAL_HEADER);
    text.push('\n');
    for r in intervals {
        text.push_str(&r.csv());
        text.push('\n');
    }
    std::fs::write(&path, text).map_err(|e| io(&path, e))
}
