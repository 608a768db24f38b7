//! The `talus` command: `db_bench`, `cache_bench`, `ldb`, `sst_dump`, `stress`, `ibench`,
//! `sysbench`, `tpcc`, `report`, `raft-kv`, `raft-ctl`, `raft-bench`.
//!
//! `talus <subcommand> [args...]`. The replicated service's `raft-kv`, `raft-ctl` and
//! `raft-bench` live in the `talus-raft` crate (`talus_raft::cmd`). Each subcommand is a module with
//! `run(args: &[String]) -> i32` (the exit code) that gets the arguments after its name; add one
//! by adding a `match` arm in [`dispatch`] and a line in [`USAGE`]. No or an unknown subcommand
//! prints the usage and exits 2.
#![warn(missing_docs)]

mod build_info;
mod cache_bench;
mod db_bench;
mod dbdir;
mod engine_state;
mod fmt;
mod ibench;
mod ldb;
mod oltp;
mod options;
mod precheck;
mod procio;
mod report;
mod sst_dump;
mod stress;
mod sysbench;
mod table;
mod table_engines;
mod tpcc;

/// The top-level usage text.
const USAGE: &str = "\
usage: talus <command> [args...]

commands:
  db_bench   RocksDB's benchmark, flag for flag (talus db_bench --benchmarks=fillrandom,readrandom)
  cache_bench  benchmark the block caches (RocksDB cache_bench flags: --cache_type=hyper_clock_cache)
  ldb        inspect and edit a database (RocksDB ldb syntax: talus ldb --db=PATH get KEY)
  sst_dump   inspect SST files (RocksDB sst_dump syntax: talus sst_dump --file=F --command=scan)
  ibench     the insert benchmark on Talus, RocksDB or SQLite (talus ibench --engine=talus --db=DIR)
  sysbench   sysbench's OLTP microbenchmarks on Talus or SQLite (talus sysbench ... all run)
  tpcc       a TPC-C workload on Talus or SQLite, consistency-checked (talus tpcc ... run)
  report     HTML report from ibench/db_bench results (talus report --results=DIR --out=F.html)
  stress     db_stress-style workload with an expected state; --crash runs the kill -9 loop
  raft-kv    a node of the replicated key-value service (openraft on Talus; --id --addr --peers --dir)
  raft-ctl   client and cluster admin of raft-kv (talus raft-ctl --nodes=H:P put K V | get K | metrics)
  raft-bench 3 local raft-kv nodes: the kill test with a linearizability check, or throughput

Run `talus <command> --help` for a command's options; `talus --version` prints the version.
";

/// Runs the subcommand named by `args[0]` on `args[1..]`; returns the exit code.
fn dispatch(args: &[String]) -> i32 {
    let Some((cmd, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return 2;
    };
    match cmd.as_str() {
        "db_bench" => db_bench::run(rest),
        "cache_bench" => cache_bench::run(rest),
        "ldb" => ldb::run(rest),
        "sst_dump" => sst_dump::run(rest),
        "stress" => stress::run(rest),
        "ibench" => ibench::run(rest),
        "sysbench" => sysbench::run(rest),
        "tpcc" => tpcc::run(rest),
        "report" => report::run(rest),
        "raft-kv" => talus_raft::cmd::raft_kv(rest),
        "raft-ctl" => talus_raft::cmd::raft_ctl(rest),
        "raft-bench" => talus_raft::cmd::raft_bench(rest),
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            0
        }
        "--version" | "-V" | "version" => {
            println!("talus {}", env!("CARGO_PKG_VERSION"));
            0
        }
        other => {
            eprintln!("talus: unknown command {other:?}");
            eprint!("{USAGE}");
            2
        }
    }
}

fn main() {
    let mut args = Vec::new();
    for a in std::env::args_os().skip(1) {
        match a.into_string() {
            Ok(s) => args.push(s),
            Err(a) => {
                eprintln!("talus: argument {a:?} is not valid UTF-8 (give such keys with --hex)");
                std::process::exit(2);
            }
        }
    }
    std::process::exit(dispatch(&args));
}
