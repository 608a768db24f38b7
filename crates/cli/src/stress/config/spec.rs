//! What `talus stress` accepts: the option names ([`SPEC`]), the engine options a worker maps
//! onto its `Config` fields ([`FIELDS`]) and the `--help` text ([`USAGE`]). Constants only;
//! read by `stress::run` (checking the command line, `--help`) and `Config::from_args`.

use crate::options::Spec;

/// Options that take a value.
const VALUES: &[&str] = &[
    "db",
    "expected_state",
    "threads",
    "max_key",
    "ops_per_thread",
    "duration",
    "seed",
    "value_size_max",
    "readpercent",
    "writepercent",
    "delpercent",
    "delrangepercent",
    "batchpercent",
    "iterpercent",
    "snapshotpercent",
    "max_delrange",
    "verify_every",
    "flush_one_in",
    "compact_range_one_in",
    "ingest_one_in",
    "checkpoint_one_in",
    "backup_one_in",
    "column_families",
    "kill_random_test",
    "kill_points",
    "workload",
    // Driver only.
    "cycles",
    "kill_min_ms",
    "kill_max_ms",
];

/// What `talus stress` accepts.
pub const SPEC: Spec<'static> = Spec {
    values: VALUES,
    flags: &[
        "verify_only",
        "crash",
        "require_every_point",
        "direct_io",
        "help",
        "destroy_db_initially",
        "sync",
        "disable_wal",
        "strict_unsynced",
        "use_merge",
    ],
    engine: true,
};

/// Engine options a worker maps onto its own fields (the crash driver varies them); any other
/// engine option given is kept in [`Config::extra`](super::Config::extra) and passed on as
/// given.
pub(super) const FIELDS: &[&str] = &[
    "compression",
    "block_size",
    "write_buffer_size",
    "max_write_buffer_number",
    "bloom_bits",
    "cache_size",
    "target_file_size_base",
    "max_bytes_for_level_base",
    "level0_file_num_compaction_trigger",
    "max_background_jobs",
    "compaction_style",
    "max_subcompactions",
    "cache_type",
    "intra_l0_compaction",
    "max_open_files",
    "wal_recovery_mode",
    "use_direct_reads",
    "use_direct_io_for_flush_and_compaction",
    "index_type",
    "partition_filters",
    "metadata_block_size",
    "checksum",
];

/// `talus stress --help`.
pub const USAGE: &str = "\
usage: talus stress --db=DIR [--expected_state=FILE] [options]   one worker run
       talus stress --crash --db=DIR [--duration=S] [options]     kill -9 / verify loop

worker: --expected_state=FILE (none: kept in memory for this run, as db_stress without
  --expected_values_dir)  --destroy_db_initially (default 1 without --expected_state, as
  db_stress; 0 with one)  --threads=8 --max_key=100000 --ops_per_thread=1000000000
  --duration=60 --seed=N --verify_only  --sync=1 --disable_wal=0 --strict_unsynced=1 --value_size_max=100
  --use_merge=0 (db_stress's: every put is written as a merge operand; the database always has
                 the merge operator `put`, RocksDB's PutOperator, so a put and a merge mean the
                 same and the expected state is unchanged; the crash driver draws it per cycle)
  op mix (percent, sum 100): --readpercent=25 --writepercent=30 --delpercent=10
  --delrangepercent=5 --batchpercent=10 --iterpercent=15 --snapshotpercent=5
  --max_delrange=10 --verify_every=2000 --flush_one_in=2000 --compact_range_one_in=10000
  --ingest_one_in=5000 --checkpoint_one_in=0 --backup_one_in=0  (a checkpoint, or a backup
                        verified and restored, made while the others write and checked to hold
                        a prefix of the writes; what a kill leaves is checked by the next run)
  --column_families=1  (db_stress's name) key K lives in family K % N (`default`, `1`, `2`,
                        ...); batches, delete ranges and snapshots span families, iterators read
                        one, an ingestion's file goes to one, checkpoints and backups copy
                        and are checked in all; fixed for a database. With N > 1 no table
                        workload
  --kill_random_test=N --kill_points=PREFIX,...  whitebox kill points (a build with
                        --features kill-points): each pass at an armed point kills the worker
                        with odds 1 in N
  db options: --compression=lz4 --block_size=4096 --write_buffer_size=4194304
  --max_write_buffer_number=2 --bloom_bits=10 --cache_size=33554432
  --target_file_size_base=2097152 --max_bytes_for_level_base=8388608
  --level0_file_num_compaction_trigger=4 --max_background_jobs=2 --compaction_style=level
  --max_open_files=-1 --wal_recovery_mode=kPointInTimeRecovery (RocksDB's names, or 0-3)
  --use_direct_reads=0 --use_direct_io_for_flush_and_compaction=0 --index_type=0
  (2: partitioned) --partition_filters=0 --metadata_block_size=4096 --checksum=kXXH3
  --workload=kv|table  (table: rows + 2 secondary indexes + an index build, checked for
                        index consistency after every reopen)
crash driver: --duration=600 (seconds) --cycles=N (stop after N) --kill_min_ms=2000
  --kill_max_ms=10000 --expected_state=<db>.expected --seed=N --destroy_db_initially=1;
  every worker option above is passed on, and the options it names are not drawn per cycle
  --kill_points=all|PREFIX,...  whitebox: each cycle targets the least killed armed kill point
                        (odds per point), the timer kill is the fallback; kills counted per point
  --require_every_point=1  fail unless every armed point killed at least once
  --direct_io=1  direct reads and writes in every cycle (else drawn per cycle)
exit: 0 ok, 1 verification failure, 2 usage, 3 database error
";
