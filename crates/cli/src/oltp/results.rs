//! `--results=DIR` files of `talus sysbench` and `talus tpcc`, read by `talus report`:
//! `run.json` (`{"tool", "format_version": 1, "engine", "command_line": [..], "options":
//! {name: value as string}, "started_unix"}`, the same shape `talus ibench` writes) and CSV
//! files with a header row and no quoting (values never contain commas). Called from the
//! tools' main thread only.

use std::io::Write;
use std::path::Path;

fn io(path: &Path, e: std::io::Error) -> String {
    format!("results: {}: {e}", path.display())
}

/// Creates `dir` and writes `run.json`.
pub fn write_run(
    dir: &Path,
    tool: &str,
    engine: &str,
    argv: &[String],
    options: &[(String, String)],
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut opts = serde_json::Map::new();
    for (k, v) in options {
        opts.insert(k.clone(), serde_json::Value::String(v.clone()));
    }
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut cmd = vec!["talus".to_string()];
    cmd.extend(tool.strip_prefix("talus ").map(str::to_string));
    cmd.extend(argv.iter().cloned());
    let run = serde_json::json!({
        "tool": tool,
        "format_version": 1,
        "engine": engine,
        "command_line": cmd,
        "options": opts,
        "started_unix": started,
    });
    let path = dir.join("run.json");
    let text = serde_json::to_string_pretty(&run).map_err(|e| format!("results: json: {e}"))?;
    std::fs::write(&path, text + "\n").map_err(|e| io(&path, e))
}

/// Appends one row to `dir/name` (writing `header` first if the file is new).
pub fn append_row(dir: &Path, name: &str, header: &[&str], row: &[String]) -> Result<(), String> {
    let path = dir.join(name);
    let new = !path.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| io(&path, e))?;
    let mut text = String::new();
    if new {
        text.push_str(&header.join(","));
        text.push('\n');
    }
    text.push_str(&row.join(","));
    text.push('\n');
    f.write_all(text.as_bytes()).map_err(|e| io(&path, e))
}

/// Writes `dir/name` with `header` and `rows`, replacing it.
pub fn write_csv(
    dir: &Path,
    name: &str,
    header: &[&str],
    rows: &[Vec<String>],
) -> Result<(), String> {
    let path = dir.join(name);
    let mut text = header.join(",");
    text.push('\n');
    for r in rows {
        text.push_str(&r.join(","));
        text.push('\n');
    }
    std::fs::write(&path, text).map_err(|e| io(&path, e))
}

/// Removes `dir/name` if it exists (a rerun into the same folder starts it anew).
pub fn remove(dir: &Path, name: &str) -> Result<(), String> {
    let path = dir.join(name);
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(&path, e)),
        _ => Ok(()),
    }
}

/// A number for CSV: at most 3 decimals, no trailing zeros.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
