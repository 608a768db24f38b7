#!/usr/bin/env bash
# randomtransaction, Talus against RocksDB's db_bench, interleaved (ABBA) with the same flags.
#
#   bench/randomtransaction.sh TALUS_BIN ROCKSDB_DB_BENCH [ROCKSDB_NOPREPARE_DB_BENCH] [ROUNDS]
#
# TALUS_BIN: a `talus` binary (build it with RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR=
# target/lto cargo build --profile release-lto -p talus-cli). ROCKSDB_DB_BENCH: RocksDB's
# db_bench; 10.4.2's release binary cannot run randomtransaction (see
# docs/rocksdb-differences.md), so pass one built by bench/rocksdb_randomtransaction_fix.sh.
# The optional third binary is the same with two-phase commit left out (Talus has none); the
# pessimistic runs use it when given. Prints each result line and the load average around
# each run; the ratio Talus/RocksDB is computed by the caller from the ops/sec. NUM (keys per
# set, 1000000), WRITES (transactions per thread, 100000), THREADS ("1 2") and MODES
# ("--optimistic_transaction_db --transaction_db") change the run.
set -euo pipefail
talus=$1
rocks=$2
noprep=${3:-$2}
rounds=${4:-2}
dir=$(mktemp -d /tmp/txnbench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
common=(--benchmarks=randomtransaction --num="${NUM:-1000000}" --writes="${WRITES:-100000}"
        --transaction_sets=2
        --compression_type=snappy --write_buffer_size=67108864 --max_write_buffer_number=2
        --cache_size=8388608 --bloom_bits=10 --sync=false --disable_wal=false
        --transaction_lock_timeout=100 --seed=12345)
run() { # name binary mode threads
  local name=$1 bin=$2 mode=$3 threads=$4
  local cmd=("$bin")
  [ "$name" = talus ] && cmd+=(db_bench)
  local l0; l0=$(cut -d' ' -f1 /proc/loadavg)
  local line; line=$("${cmd[@]}" "${common[@]}" "$mode" --threads="$threads" --db="$dir/db" \
    2>/dev/null | grep -E '^randomtransaction|RandomTransactionVerify' | tr '\n' ' ' || true)
  local l1; l1=$(cut -d' ' -f1 /proc/loadavg)
  echo "$name $mode threads=$threads load=$l0->$l1 :: $line"
  rm -rf "$dir/db"
}
for r in $(seq 1 "$rounds"); do
  for threads in ${THREADS:-1 2}; do
    for mode in ${MODES:---optimistic_transaction_db --transaction_db}; do
      rb=$rocks; [ "$mode" = --transaction_db ] && rb=$noprep
      run talus "$talus" "$mode" "$threads"
      run rocksdb "$rb" "$mode" "$threads"
      run rocksdb "$rb" "$mode" "$threads"
      run talus "$talus" "$mode" "$threads"
    done
  done
done
