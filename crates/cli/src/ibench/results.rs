//! Writes `--results=DIR`: `run.json`, `summary.csv` (one row per step, appended as steps end)
//! and `<step>.intervals.csv`. Column meanings are in the module doc of [`super`]. Called by
//! [`super::run`] from the main thread only.

use std::io::Write;
use std::path::Path;

use super::config::{describe, Config};
use super::summary::{interval_header, IntervalRow, Summary};

fn io(path: &Path, e: std::io::Error) -> String {
    format!("results: {}: {e}", path.display())
}

/// Creates `dir` and writes `run.json` (command line, engine, every option).
pub fn write_run(dir: &Path, cfg: &Config, argv: &[String]) -> Result<(), String> {
    let options: Vec<(String, String)> =
        describe(cfg).into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    crate::oltp::results::write_run(dir, "talus ibench", cfg.engine.name(), argv, &options)?;
    // A rerun into the same folder starts a new summary.
    crate::oltp::results::remove(dir, "summary.csv")
}

/// Appends the step's summary row to `summary.csv` (with the header first) and writes
/// `<step>.intervals.csv`.
/// `clients` names the per-client columns (`ips_c0`, ...).
pub fn write_step(
    dir: &Path,
    s: &Summary,
    intervals: &[IntervalRow],
    clients: usize,
) -> Result<(), String> {
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
    let mut text = interval_header(clients);
    text.push('\n');
    for r in intervals {
        text.push_str(&r.csv());
        text.push('\n');
    }
    std::fs::write(&path, text).map_err(|e| io(&path, e))
}
