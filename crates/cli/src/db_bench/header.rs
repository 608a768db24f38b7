//! The header db_bench prints before the first benchmark (RocksDB's `PrintHeader` and
//! `PrintEnvironment`): the environment lines go to stderr, the rest to stdout.

use std::io::Write;

use super::flags::Flags;
use super::report::{ctime, wall_secs};

/// `(cpu count, model name, cache size)` from `/proc/cpuinfo`, when readable.
fn cpu_info() -> Option<(usize, String, String)> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let (mut n, mut model, mut cache) = (0, String::new(), String::new());
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else { continue };
        match k.trim() {
            "model name" => {
                n += 1;
                model = v.trim().to_string();
            }
            "cache size" => cache = v.trim().to_string(),
            _ => {}
        }
    }
    Some((n, model, cache))
}

/// Prints the header for `flags` on `engine_memtable` (the memtable's name).
pub fn print(f: &Flags, engine_memtable: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "Talus:      version {} ({})",
        env!("CARGO_PKG_VERSION"),
        crate::build_info::describe()
    );
    let _ = writeln!(err, "Date:       {}", ctime(wall_secs()));
    if let Some((n, model, cache)) = cpu_info() {
        let _ = writeln!(err, "CPU:        {n} * {model}");
        let _ = writeln!(err, "CPUCache:   {cache}");
    }
    drop(err);
    let compression = talus::CompressionType::parse(&f.compression_type)
        .map(|c| c.name())
        .unwrap_or("NoCompression");
    let mut out = std::io::stdout().lock();
    let key = f.key_size;
    let value = f.value_size;
    let num = f.num;
    let _ = writeln!(out, "Keys:       {key} bytes each (+ 0 bytes user-defined timestamp)");
    let _ = writeln!(
        out,
        "Values:     {value} bytes each ({} bytes after compression)",
        (value as f64 * f.compression_ratio + 0.5) as i64
    );
    let _ = writeln!(out, "Entries:    {num}");
    let _ = writeln!(out, "Prefix:    0 bytes");
    let _ = writeln!(out, "Keys per prefix:    0");
    let _ = writeln!(
        out,
        "RawSize:    {:.1} MB (estimated)",
        ((key + value) * num) as f64 / 1_048_576.0
    );
    let _ = writeln!(
        out,
        "FileSize:   {:.1} MB (estimated)",
        ((key as f64 + value as f64 * f.compression_ratio) * num as f64) / 1_048_576.0
    );
    let _ = writeln!(out, "Write rate: {} bytes/second", f.benchmark_write_rate_limit);
    let _ = writeln!(out, "Read rate: 0 ops/second");
    let _ = writeln!(out, "Compression: {compression}");
    let _ = writeln!(out, "Compression sampling rate: 0");
    let _ = writeln!(out, "Memtablerep: {engine_memtable}");
    let _ = writeln!(out, "Perf Level: {}", f.perf_level);
    let _ = writeln!(out, "Engine:     {}", f.engine);
    if cfg!(debug_assertions) {
        let _ = writeln!(out, "WARNING: Optimization is disabled: benchmarks unnecessarily slow");
        let _ = writeln!(out, "WARNING: Assertions are enabled; benchmarks unnecessarily slow");
    }
    let _ = writeln!(out, "------------------------------------------------");
    let _ = out.flush();
}
