//! `talus db_bench`: RocksDB's db_bench, flag for flag, against Talus, RocksDB (cargo feature
//! `rocksdb`) or an in-memory ordered map, with one driver, key generator and timing code.
//!
//! Entry point [`run`] (called by `main` with the arguments after `db_bench`; returns the exit
//! code). The flow is RocksDB's `Benchmark::Run`: parse and check every flag (errors exit 1
//! before the database directory is touched), open the engine, print the header, then run each
//! of `--benchmarks` in order; fill benchmarks start from an empty database. Output lines are
//! RocksDB's so its parsers (benchmark.sh greps `ops/sec` and `micros/op`) read them unchanged.
//!
//! Submodules: `flags` (parsing, help), `keygen` (keys, values, generators), `histogram`,
//! `report` (per-thread stats and result lines), `header`, `runner` (threads, budgets, rate
//! limiter), `workloads` (benchmark bodies), `engines` (the engine trait and its impls).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize};

pub(crate) mod engines;
pub(crate) mod flags;
mod header;
pub(crate) mod histogram;
pub(crate) mod keygen;
mod random_txn;
mod report;
mod runner;
mod thread_state;
mod workloads;

use engines::Engine;
use flags::Flags;
use report::ReportConfig;
use thread_state::{Params, RateLimiter, Shared};
use workloads::Method;

/// Runs db_bench with `args` (the arguments after `db_bench`); returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let flags = match flags::parse(args) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("ERROR: {e}");
            eprintln!("(talus db_bench --help lists the flags)");
            return 1;
        }
    };
    if flags.help {
        print!("{}", flags::help_text());
        return 0;
    }
    if let Err(e) = engines::check_options(&flags) {
        eprintln!("ERROR: invalid engine options: {e}");
        return 1;
    }
    match Bench::new(flags).and_then(|mut b| b.run()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("ERROR: {e}");
            1
        }
    }
}

struct Bench {
    flags: Flags,
    seed_base: u64,
    path: PathBuf,
    /// Removes the default temporary directory at exit (after the engine is closed).
    _tempdir: Option<tempfile::TempDir>,
    engine: Option<Box<dyn Engine>>,
    values: std::sync::Arc<[u8]>,
    cfg: ReportConfig,
    thread_counter: u64,
}

impl Bench {
    fn new(flags: Flags) -> Result<Bench, String> {
        let seed_base = if flags.seed == 0 {
            let s = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_micros() as u64)
                .unwrap_or(1);
            println!("Set seed to {s} because --seed was 0");
            s
        } else {
            flags.seed
        };
        let (path, tempdir) = if flags.db.is_empty() {
            let t = tempfile::Builder::new()
                .prefix("talus-dbbench-")
                .tempdir()
                .map_err(|e| format!("creating a temporary directory: {e}"))?;
            (t.path().to_path_buf(), Some(t))
        } else {
            (PathBuf::from(&flags.db), None)
        };
        if !flags.use_existing_db && !flags.readonly {
            crate::dbdir::check_replaceable(&path)?;
            engines::destroy(&flags, &path)?;
        }
        let values = keygen::value_data(flags.compression_ratio, flags.value_size as usize);
        let cfg = ReportConfig::new(&flags);
        Ok(Bench {
            flags,
            seed_base,
            path,
            _tempdir: tempdir,
            engine: None,
            values,
            cfg,
            thread_counter: 0,
        })
    }

    fn open(&mut self) -> Result<(), String> {
        self.engine = None;
        self.engine = Some(engines::open(&self.flags, &self.path)?);
        Ok(())
    }

    fn engine(&self) -> Result<&dyn Engine, String> {
        self.engine.as_deref().ok_or_else(|| "the database is not open".to_string())
    }

    fn run(&mut self) -> Result<(), String> {
        self.open()?;
        header::print(&self.flags, self.engine()?.memtable_name());
        let names: Vec<String> = self
            .flags
            .benchmarks
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        for name in names {
            self.run_one(&name)?;
        }
        if self.flags.statistics {
            let s = self.engine()?.property("statistics");
            println!(
                "STATISTICS:\n{}",
                s.unwrap_or_else(|| format!("(not available for --engine={})", self.flags.engine))
            );
        }
        self.engine = None;
        Ok(())
    }

    fn params(&self) -> Params {
        let f = &self.flags;
        let or_num = |v: i64| if v < 0 { f.num as u64 } else { v as u64 };
        Params {
            flag_num: f.num as u64,
            num: f.num as u64,
            reads: or_num(f.reads),
            writes: or_num(f.writes),
            deletes: or_num(f.deletes),
            readwrites: if f.writes < 0 && f.reads < 0 {
                f.num as u64
            } else {
                f.writes.max(f.reads) as u64
            },
            batch: f.batch_size as u64,
            key_size: f.key_size as usize,
            value_size: f.value_size as usize,
            duration: f.duration as u64,
            ops_between_duration_checks: f.ops_between_duration_checks as u64,
            seek_nexts: f.seek_nexts as u64,
            readwritepercent: f.readwritepercent as u64,
            merge_keys: or_num(f.merge_keys),
            mergereadpercent: f.mergereadpercent as u64,
            exp_range: f.read_random_exp_range,
            seed_base: self.seed_base,
            write_rate_limit: f.benchmark_write_rate_limit,
            transaction_sets: f.transaction_sets,
        }
    }

    fn run_one(&mut self, name: &str) -> Result<(), String> {
        let mut threads = self.flags.threads as usize;
        let mut fresh_db = false;
        let method = match name {
            "fillseq" => {
                fresh_db = true;
                Some(Method::WriteSeq)
            }
            "fillrandom" => {
                fresh_db = true;
                Some(Method::WriteRandom)
            }
            "filluniquerandom" => {
                fresh_db = true;
                if threads > 1 {
                    eprint!("filluniquerandom and fillanddeleteuniquerandom multithreaded not supported, use 1 thread");
                    threads = 1;
                }
                Some(Method::WriteUniqueRandom)
            }
            "overwrite" => Some(Method::WriteRandom),
            "readrandom" => Some(Method::ReadRandom),
            "readseq" => Some(Method::ReadSeq),
            "readreverse" => Some(Method::ReadReverse),
            "seekrandom" => Some(Method::SeekRandom),
            "readwhilewriting" => {
                threads += 1;
                Some(Method::ReadWhileWriting)
            }
            "seekrandomwhilewriting" => {
                threads += 1;
                Some(Method::SeekRandomWhileWriting)
            }
            "readrandomwriterandom" => Some(Method::ReadRandomWriteRandom),
            "deleterandom" => Some(Method::DeleteRandom),
            "multireadrandom" => {
                eprintln!("entries_per_batch = {}", self.flags.batch_size);
                Some(Method::MultiReadRandom)
            }
            "mergerandom" | "readrandommergerandom" if self.flags.merge_operator.is_empty() => {
                // RocksDB's db_bench prints this and exits with 1.
                println!("{name:<12} : skipped (--merge_operator is unknown)");
                return Err(format!("{name} needs --merge_operator"));
            }
            "mergerandom" => Some(Method::MergeRandom),
            "readrandommergerandom" => Some(Method::ReadRandomMergeRandom),
            "randomtransaction" => Some(Method::RandomTransaction),
            "compact" => Some(Method::Compact),
            "flush" => {
                self.engine()?.flush().map_err(|e| format!("Flush failed: {e}"))?;
                println!("flush memtable");
                None
            }
            "waitforcompaction" => {
                let p = self.path.display().to_string();
                println!("waitforcompaction({p}): started");
                let r = self.engine()?.wait_for_compaction();
                println!("waitforcompaction({p}): finished with status ({})", status(&r));
                None
            }
            "stats" | "levelstats" => {
                let s = self.engine()?.property(name).unwrap_or_else(|| "(failed)".into());
                println!("\n{s}");
                None
            }
            other => return Err(format!("unknown benchmark '{other}'")),
        };
        let mut method = method;
        if fresh_db {
            if self.flags.use_existing_db || self.flags.readonly {
                let flag = if self.flags.readonly { "readonly" } else { "use_existing_db" };
                println!("{name:<12} : skipped (--{flag} is true)");
                method = None;
            } else {
                self.engine = None;
                engines::destroy(&self.flags, &self.path)?;
                self.open()?;
            }
        }
        let Some(method) = method else { return Ok(()) };
        println!("DB path: [{}]", self.path.display());
        let params = self.params();
        let limiter =
            (params.write_rate_limit > 0).then(|| RateLimiter::new(params.write_rate_limit));
        let shared = Shared {
            engine: self.engine.as_deref().ok_or("the database is not open")?,
            params: &params,
            values: self.values.clone(),
            num_done: AtomicUsize::new(0),
            total: threads,
            abort: AtomicBool::new(false),
            write_limiter: limiter,
        };
        runner::run_benchmark(&shared, self.cfg, &mut self.thread_counter, threads, name, method)?;
        if method == Method::RandomTransaction {
            if let Some(line) = random_txn::verify(shared.engine, self.flags.transaction_sets)? {
                println!("{line}");
            }
        }
        Ok(())
    }
}

fn status(r: &Result<(), String>) -> String {
    match r {
        Ok(()) => "OK".into(),
        Err(e) => e.clone(),
    }
}
