//! Runs the `talus db_bench` binary end to end on the `memory` and `talus` engines with small
//! `--num`: every benchmark prints a line RocksDB's parsers read, reads after a fill find every
//! key, and bad flags fail before the database directory is created.

use std::path::Path;
use std::process::{Command, Output};

const ALL: &str = "fillseq,readrandom,readseq,readreverse,seekrandom,overwrite,fillrandom,\
                   filluniquerandom,readwhilewriting,seekrandomwhilewriting,readrandomwriterandom,\
                   deleterandom,multireadrandom,compact,flush,waitforcompaction,stats,levelstats";

/// Benchmarks that RocksDB reports with a result line (the others print their own output).
const MEASURED: &[&str] = &[
    "fillseq",
    "readrandom",
    "readseq",
    "readreverse",
    "seekrandom",
    "overwrite",
    "fillrandom",
    "filluniquerandom",
    "readwhilewriting",
    "seekrandomwhilewriting",
    "readrandomwriterandom",
    "deleterandom",
    "multireadrandom",
    "compact",
];

fn db_bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus"))
        .arg("db_bench")
        .args(args)
        .output()
        .expect("running talus db_bench")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// RocksDB's regex `^\S+\s+:\s+[0-9.]+ micros/op [0-9]+ ops/sec`, by hand; returns the name.
fn result_line(line: &str) -> Option<&str> {
    let (name, rest) = line.split_once(" :")?;
    let name = name.trim_end();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start();
    let (num, rest) = rest.split_once(" micros/op ")?;
    if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let (ops, _) = rest.split_once(" ops/sec")?;
    (!ops.is_empty() && ops.chars().all(|c| c.is_ascii_digit())).then_some(name)
}

fn lines_for(out: &str, name: &str) -> Vec<String> {
    out.lines().filter(|l| result_line(l) == Some(name)).map(str::to_string).collect()
}

fn every_benchmark_runs(engine: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let o = db_bench(&[
        &format!("--engine={engine}"),
        &format!("--db={}", db.display()),
        "--num=3000",
        "--seed=7",
        "--seek_nexts=5",
        "--write_buffer_size=65536",
        "--histogram",
        &format!("--benchmarks={ALL}"),
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "exit {:?}\nstdout:\n{out}\nstderr:\n{}", o.status, stderr(&o));
    for name in MEASURED {
        assert_eq!(lines_for(&out, name).len(), 1, "{engine}: no result line for {name}:\n{out}");
    }
    // readrandom right after fillseq finds every key.
    let rr = &lines_for(&out, "readrandom")[0];
    assert!(rr.ends_with("(3000 of 3000 found)"), "{rr}");
    assert!(rr.contains(" MB/s"), "{rr}");
    let fill = &lines_for(&out, "fillseq")[0];
    assert!(fill.contains(" 3000 operations;") && fill.ends_with(" MB/s"), "{fill}");
    let sr = &lines_for(&out, "seekrandom")[0];
    assert!(sr.ends_with("(3000 of 3000 found)"), "{sr}");
    let rw = &lines_for(&out, "readrandomwriterandom")[0];
    assert!(rw.contains("( reads:2700 writes:300 total:3000 found:"), "{rw}");
    assert!(out.contains("flush memtable"), "{out}");
    assert!(out.contains("): finished with status (OK)"), "{out}");
    assert!(out.contains("Microseconds per write:\nCount: 3000 Average: "), "{out}");
    assert!(out.contains("Microseconds per read:"), "{out}");
    assert!(out.contains("Microseconds per seek:"), "{out}");
    assert!(out.contains("Percentiles: P50: "), "{out}");
    for h in [
        "Keys:       16 bytes each",
        "Values:     100 bytes each (50 bytes after compression)",
        "Entries:    3000",
    ] {
        assert!(out.contains(h), "{h}:\n{out}");
    }
    // Piped stderr: no progress indicator.
    assert!(!stderr(&o).contains("... finished"), "{}", stderr(&o));
    if engine == "talus" {
        assert!(out.contains("** Compaction Stats"), "{out}");
        assert!(out.contains("Level Files Size(MB)"), "{out}");
    }
    // --db given: kept (the memory engine writes no files).
    assert_eq!(db.exists(), engine != "memory");
}

#[test]
fn memory_every_benchmark_runs() {
    every_benchmark_runs("memory");
}

#[test]
fn talus_every_benchmark_runs() {
    every_benchmark_runs("talus");
}

fn threads_and_rate_limit(engine: &str) {
    let o = db_bench(&[
        &format!("--engine={engine}"),
        "--num=2000",
        "--threads=2",
        "--benchmark_write_rate_limit=200000",
        "--benchmarks=fillrandom,readrandom,readwhilewriting,multireadrandom",
        "--batch_size=8",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    // Two threads read --reads (= --num) each.
    assert!(lines_for(&out, "readrandom")[0].contains(" 4000 operations;"), "{out}");
    assert!(lines_for(&out, "readwhilewriting")[0].contains(" 4000 operations;"), "{out}");
    assert!(lines_for(&out, "multireadrandom")[0].contains(" 4000 operations;"), "{out}");
    // The default database is a temporary directory, removed at exit.
    let path =
        out.lines().find_map(|l| l.strip_prefix("DB path: [")).unwrap().trim_end_matches(']');
    assert!(!Path::new(path).exists(), "{path} left behind");
}

#[test]
fn memory_threads_and_rate_limit() {
    threads_and_rate_limit("memory");
}

#[test]
fn talus_threads_and_rate_limit() {
    threads_and_rate_limit("talus");
}

#[test]
fn talus_reopens_existing_db() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let o = db_bench(&["--engine=talus", &db, "--num=1000", "--benchmarks=fillseq"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = db_bench(&[
        "--engine=talus",
        &db,
        "--num=1000",
        "--use_existing_db",
        "--benchmarks=fillseq,readrandom",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert!(out.contains("fillseq      : skipped (--use_existing_db is true)"), "{out}");
    assert!(lines_for(&out, "readrandom")[0].ends_with("(1000 of 1000 found)"), "{out}");
}

#[test]
fn bad_flags_fail_before_touching_the_db() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("never");
    let dbflag = format!("--db={}", db.display());
    for (bad, names) in [
        ("--num=-5", "--num"),
        ("--compression_type=foo", "--compression_type"),
        ("--benchmarks=fillseq,nosuch", "nosuch"),
        ("--no_such_flag=1", "no_such_flag"),
        ("--histogram=maybe", "--histogram"),
        ("--cache_type=no_such_cache", "no_such_cache"),
        ("--max_write_buffer_number=1", "--max_write_buffer_number"),
        ("--level0_stop_writes_trigger=1", "level0_stop_writes_trigger"),
    ] {
        for engine in ["memory", "talus"] {
            let o = db_bench(&[&format!("--engine={engine}"), &dbflag, bad]);
            assert_eq!(o.status.code(), Some(1), "{bad}: {}", stderr(&o));
            assert!(stderr(&o).contains(names), "{bad}: {}", stderr(&o));
            assert!(stdout(&o).is_empty(), "{bad}: {}", stdout(&o));
            assert!(!db.exists(), "{bad} created the db directory");
        }
    }
    // RocksDB's --mmap_write maps SST files, which Talus never does: refused, naming Talus's own
    // WAL mapping flag, not taken for it.
    let o = db_bench(&["--engine=talus", &dbflag, "--mmap_write=true"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("--wal_mmap_writes"), "{}", stderr(&o));
    assert!(!db.exists(), "--mmap_write=true created the db directory");
}

#[test]
fn help_lists_flags_and_noops() {
    let o = db_bench(&["--help"]);
    assert!(o.status.success());
    let out = stdout(&o);
    for f in
        ["--benchmarks", "--num (default 1000000)", "--engine", "--wal_dir", "--bytes_per_sync"]
    {
        assert!(out.contains(f), "{f}:\n{out}");
    }
}

/// A command line in the style of RocksDB's tools/benchmark.sh is accepted as is.
#[test]
fn benchmark_sh_command_line_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let o = db_bench(&[
        "--engine=memory",
        "--benchmarks=fillseq",
        "--use_existing_db=0",
        "--sync=0",
        "--undefok=use_blob_cache,use_shared_block_and_blob_cache,blob_cache_size",
        &format!("--db={d}"),
        &format!("--wal_dir={d}"),
        "--num=1000",
        "--key_size=20",
        "--value_size=400",
        "--block_size=8192",
        "--cache_size=1073741824",
        "--cache_numshardbits=6",
        "--compression_max_dict_bytes=0",
        "--compression_ratio=0.5",
        "--compression_type=lz4",
        "--bytes_per_sync=1048576",
        "--benchmark_write_rate_limit=0",
        "--write_buffer_size=134217728",
        "--target_file_size_base=134217728",
        "--max_bytes_for_level_base=1073741824",
        "--verify_checksum=1",
        "--delete_obsolete_files_period_micros=62914560",
        "--max_bytes_for_level_multiplier=8",
        "--statistics=0",
        "--stats_per_interval=1",
        "--stats_interval_seconds=60",
        "--report_interval_seconds=5",
        "--histogram=1",
        "--memtablerep=skip_list",
        "--bloom_bits=10",
        "--open_files=-1",
        "--subcompactions=1",
        "--compaction_style=0",
        "--num_levels=8",
        "--min_level_to_compress=-1",
        "--level_compaction_dynamic_level_bytes=true",
        "--pin_l0_filter_and_index_blocks_in_cache=1",
        "--level0_file_num_compaction_trigger=4",
        "--level0_slowdown_writes_trigger=20",
        "--level0_stop_writes_trigger=30",
        "--max_background_jobs=4",
        "--max_write_buffer_number=8",
        "--allow_concurrent_memtable_write=false",
        "--threads=1",
        "--seed=1700000000",
        "--report_file=/dev/null",
        "--blob_cache_size=1",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    let line = &lines_for(&out, "fillseq")[0];
    assert!(line.contains(" 1000 operations;"), "{line}");
    assert!(out.contains("Keys:       20 bytes each"), "{out}");
    assert!(out.contains("Compression: LZ4"), "{out}");
}

#[test]
fn interval_lines_with_stats_interval_seconds() {
    let o = db_bench(&[
        "--engine=memory",
        "--num=1000",
        "--benchmarks=fillseq,readrandom",
        "--duration=2",
        "--stats_interval_seconds=1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    // `2026/11/22-23:43:02 ... thread 0: (1000,1000) ops and (...) ops/second in (...) seconds`
    let interval = err
        .lines()
        .filter(|l| l.contains(" ... thread 0: (") && l.contains(") ops/second in ("))
        .count();
    assert!(interval >= 1, "{err}");
}

#[test]
fn result_line_matcher() {
    assert_eq!(
        result_line("fillrandom   :       3.259 micros/op 306817 ops/sec 16.296 seconds 5000000 operations;   33.9 MB/s"),
        Some("fillrandom")
    );
    assert_eq!(result_line("DB path: [/tmp/x]"), None);
    assert_eq!(result_line("fillseq      : skipped (--use_existing_db is true)"), None);
}

#[test]
fn perf_context_and_index_filter_blocks_in_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let o = db_bench(&[
        "--benchmarks=fillrandom,flush,readrandom,multireadrandom,stats",
        "--num=5000",
        "--bloom_bits=10",
        "--batch_size=16",
        "--cache_size=1048576",
        "--cache_index_and_filter_blocks=true",
        "--pin_l0_filter_and_index_blocks_in_cache=true",
        "--cache_high_pri_pool_ratio=0.5",
        "--perf_level=2",
        &format!("--db={}", db.display()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let perf: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("readrandom"))
        .filter(|l| l.contains("block_cache_hit_count"))
        .collect();
    assert_eq!(perf.len(), 2, "one PERF_CONTEXT per read benchmark: {out}");
    assert!(
        perf[0].contains("bloom_filter_checked = ")
            && perf[0].contains("get_from_memtable_count = 5000"),
        "{out}"
    );
    assert!(perf[1].contains("multiget_key_count"), "{out}");
    assert!(out.contains("IndexBlock("), "entry stats in stats: {out}");
    // Off by default, as in RocksDB's db_bench.
    let o = db_bench(&["--benchmarks=fillseq,readrandom", "--num=1000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("PERF_CONTEXT"), "{}", stdout(&o));
    let o = db_bench(&["--benchmarks=fillseq", "--num=10", "--cache_high_pri_pool_ratio=2"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--cache_high_pri_pool_ratio"), "{}", stderr(&o));
}

/// `--readonly` opens the database with `Db::open_read_only`: read benchmarks run, fills are
/// skipped, a write benchmark fails, and not a byte of the directory changes.
#[test]
fn readonly_reads_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = format!("--db={}", path.display());
    let o = db_bench(&["--engine=talus", &db, "--num=1000", "--benchmarks=fillseq"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let snapshot = || -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(&path)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
            })
            .collect();
        v.sort();
        v
    };
    let before = snapshot();
    let o = db_bench(&[&db, "--num=1000", "--readonly", "--benchmarks=fillseq,readrandom,readseq"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert!(out.contains("fillseq      : skipped (--readonly is true)"), "{out}");
    assert!(lines_for(&out, "readrandom")[0].ends_with("(1000 of 1000 found)"), "{out}");
    let o = db_bench(&[&db, "--num=10", "--readonly", "--benchmarks=overwrite"]);
    assert!(!o.status.success(), "a write benchmark on a read-only database");
    assert!(stderr(&o).contains("read-only"), "{}", stderr(&o));
    assert!(snapshot() == before, "--readonly changed the database");
}

/// `--cache_size=-1` (and 0) means no block cache, as in RocksDB's db_bench; the recovery
/// mode is RocksDB's names or numbers.
#[test]
fn no_block_cache_and_recovery_modes() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    for (cache, has_cache) in
        [("--cache_size=-1", false), ("--cache_size=0", false), ("--cache_size=1048576", true)]
    {
        let o =
            db_bench(&[&db, "--num=2000", cache, "--benchmarks=fillseq,flush,readrandom,stats"]);
        let out = stdout(&o);
        assert!(o.status.success(), "{cache}: {out}\n{}", stderr(&o));
        assert!(lines_for(&out, "readrandom")[0].ends_with("(2000 of 2000 found)"), "{out}");
        assert_eq!(out.contains("Block cache LRUCache capacity"), has_cache, "{cache}: {out}");
    }
    let o = db_bench(&[&db, "--cache_size=-2"]);
    assert!(!o.status.success() && stderr(&o).contains("cache_size"), "{}", stderr(&o));
    for mode in ["kAbsoluteConsistency", "3", "kTolerateCorruptedTailRecords"] {
        let flag = format!("--wal_recovery_mode={mode}");
        let o = db_bench(&[&db, "--num=10", &flag, "--use_existing_db", "--benchmarks=readrandom"]);
        assert!(o.status.success(), "{mode}: {}", stderr(&o));
    }
    let o = db_bench(&[&db, "--wal_recovery_mode=sometimes"]);
    assert!(!o.status.success() && stderr(&o).contains("wal_recovery_mode"), "{}", stderr(&o));
}

/// mergerandom and readrandommergerandom (issue 40): RocksDB's lines and messages, the same key
/// draws on both engines (the reads find the same keys), uint64add sums what was merged, and
/// without --merge_operator the step stops with RocksDB's message.
#[test]
fn merge_benchmarks() {
    let mut msgs = Vec::new();
    for engine in ["memory", "talus"] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let o = db_bench(&[
            &format!("--engine={engine}"),
            &format!("--db={}", db.display()),
            "--num=3000",
            "--merge_keys=500",
            "--value_size=8",
            "--seed=5",
            "--merge_operator=uint64add",
            "--benchmarks=mergerandom,readrandommergerandom",
        ]);
        let out = stdout(&o);
        assert!(o.status.success(), "{out}\n{}", stderr(&o));
        let m = &lines_for(&out, "mergerandom")[0];
        assert!(m.contains(" 3000 operations;") && m.ends_with("( updates:3000)"), "{m}");
        let r = &lines_for(&out, "readrandommergerandom")[0];
        let msg = r.split_once("operations;").unwrap().1.trim().to_string();
        assert!(msg.starts_with("(reads:") && msg.contains(" total:3000 hits:"), "{msg}");
        assert!(msg.ends_with("maxlength:8)"), "{msg}");
        msgs.push(msg);
    }
    assert_eq!(msgs[0], msgs[1], "the engines read and merge the same keys");
    let o = db_bench(&["--engine=memory", "--num=10", "--benchmarks=mergerandom"]);
    assert!(!o.status.success());
    assert!(stdout(&o).contains("mergerandom  : skipped (--merge_operator is unknown)"));
    let o = db_bench(&["--engine=memory", "--merge_operator=nosuch", "--benchmarks=mergerandom"]);
    assert!(!o.status.success() && stderr(&o).contains("--merge_operator"), "{}", stderr(&o));
}

/// randomtransaction with each kind of transaction (and none): a result line with RocksDB's
/// message, and RandomTransactionVerify's line. A tiny key space and four threads make
/// conflicts (aborts) likely; they must not stop the run. Pessimistic transactions (each with a
/// snapshot, as the inserter takes one) must keep the sets' sums equal. Optimistic ones read
/// half their keys with a plain `Get` and no snapshot, then write them: an update made between
/// that read and the write is lost in RocksDB too (its db_bench fails the check in such runs),
/// so only the check's presence is required there.
#[test]
fn talus_randomtransaction_runs_and_verifies() {
    for (mode, message) in [
        ("--optimistic_transaction_db", "( transactions:"),
        ("--transaction_db", "( transactions:"),
        ("--transaction_set_snapshot", "( batches:"),
    ] {
        let o = db_bench(&[
            "--benchmarks=randomtransaction",
            "--num=20",
            "--threads=4",
            "--writes=1500",
            "--transaction_sets=3",
            "--transaction_lock_timeout=1",
            mode,
        ]);
        let out = stdout(&o);
        assert!(o.status.success(), "{mode}: {out}\n{}", stderr(&o));
        let line = &lines_for(&out, "randomtransaction")[0];
        assert!(line.contains(" 6000 operations;") && line.contains(message), "{mode}: {line}");
        let checked = out.contains("RandomTransactionVerify");
        assert_eq!(checked, message != "( batches:", "{mode}: {out}");
        if mode == "--transaction_db" {
            assert!(out.contains("RandomTransactionVerify Success."), "{mode}: {out}");
        }
    }
    // Pessimistic transactions with a snapshot at begin.
    let o = db_bench(&[
        "--benchmarks=randomtransaction",
        "--num=50",
        "--threads=2",
        "--writes=500",
        "--transaction_db",
        "--transaction_set_snapshot",
    ]);
    let out = stdout(&o);
    assert!(o.status.success() && out.contains("RandomTransactionVerify Success."), "{out}");
}

/// `--num_column_families=3` (RocksDB's flag and family names): the keys are spread over the
/// families, and reads find every key in its family.
#[test]
fn num_column_families_spreads_keys_and_reads_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let path = format!("--db={}", db.display());
    let out = db_bench(&[
        "--benchmarks=fillseq,readrandom",
        "--num=3000",
        "--num_column_families=3",
        "--seed=1",
        &path,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = stdout(&out);
    assert!(lines_for(&out, "readrandom")[0].ends_with("(3000 of 3000 found)"), "{out}");
    let opts = talus::Options::default();
    let names = talus::Db::list_column_families(&db, &opts).unwrap();
    assert_eq!(names, ["default", "column_family_name_000001", "column_family_name_000002"]);
    let descs = names[1..].iter().map(|n| talus::ColumnFamilyDescriptor::new(n, opts.clone()));
    let d = talus::Db::open_cf_read_only(&db, opts.clone(), descs).unwrap();
    for name in &names {
        let cf = d.cf_handle(name).unwrap();
        let n = d.iter_cf(&cf, &talus::ReadOptions::default()).unwrap().count();
        assert_eq!(n, 1000, "{name} holds a third of the keys");
    }
    let bad = db_bench(&["--benchmarks=fillseq", "--num=10", "--num_column_families=0"]);
    assert!(!bad.status.success() && stderr(&bad).contains("--num_column_families"));
}
