#!/usr/bin/env bash
# OLTP on Talus, RocksDB and SQLite: the tables of docs in /work/notes/issue-15.md, in one
# command. Talus and RocksDB run under the same talus-table layer (MyRocks's design), every
# engine option by its RocksDB name to both (RocksDB refuses options that differ from Talus's).
#
#   bench/oltp.sh DIR [sysbench] [tpcc] [ratelimit] [compression]    (default: all four)
#
# Builds nothing: set TALUS to the binary (default target/rdb/release/talus, built with
# --features rocksdb by bench/build_rocksdb_adapter.sh target/rdb; copied to DIR/bin so a
# rebuild cannot change it mid-run). ENGINES (default "talus rocksdb sqlite"; without a RocksDB
# build "talus sqlite") picks the engines. Every phase writes --results folders under DIR/res
# and its stdout under DIR/log; at the end `talus report` renders DIR/report.html and
# `talus sysbench summary` prints the relative summary. Engines run interleaved: the engine
# order is reversed at each sysbench thread count (ABC, CBA, ...); TPC-C's 10-minute runs go one
# engine after the other. After each sysbench prepare (seeded) `check` prints every table's and
# index's checksum, which must agree across engines (compared here). The machine's load
# (uptime) is logged around each run; run it on a quiet machine.
#
# Sizes (environment, with the defaults used for the note):
#   SB_TABLES=4 SB_ROWS=1000000 SB_TIME=10 SB_WARMUP=2 SB_CACHE=4294967296 SB_THREADS="1 2"
#   TPCC_W=150 TPCC_TIME=600 TPCC_THREADS=2 TPCC_CACHE=1073741824
#   RL_W=20 RL_TIME=360 RL_RATES="0 1048576 2097152 4194304"
set -euo pipefail
DIR=${1:?usage: bench/oltp.sh DIR [sysbench] [tpcc] [ratelimit] [compression]}
shift
PHASES=${*:-sysbench tpcc ratelimit compression}
SRC=${TALUS:-$(dirname "$0")/../target/rdb/release/talus}
ENGINES=${ENGINES:-"talus rocksdb sqlite"}
mkdir -p "$DIR/bin" "$DIR/res" "$DIR/log" "$DIR/db"
cp "$SRC" "$DIR/bin/talus"
T="$DIR/bin/talus"

SB_TABLES=${SB_TABLES:-4}
SB_ROWS=${SB_ROWS:-1000000}
SB_TIME=${SB_TIME:-10}
SB_WARMUP=${SB_WARMUP:-2}
SB_CACHE=${SB_CACHE:-4294967296}
SB_THREADS=${SB_THREADS:-"1 2"}
TPCC_W=${TPCC_W:-150}
TPCC_TIME=${TPCC_TIME:-600}
TPCC_THREADS=${TPCC_THREADS:-2}
TPCC_CACHE=${TPCC_CACHE:-1073741824}
RL_W=${RL_W:-20}
RL_TIME=${RL_TIME:-360}
RL_RATES=${RL_RATES:-"0 1048576 2097152 4194304"}

load() { echo "== $(date +%T) load: $(uptime | sed 's/.*load average: //')"; }

sysbench_phase() {
  local sb="--tables=$SB_TABLES --table_size=$SB_ROWS --cache_size=$SB_CACHE"
  local order="$ENGINES" sums
  for th in $SB_THREADS; do
    sums=""
    for e in $ENGINES; do
      rm -rf "$DIR/db/sb-$e"
      load
      "$T" sysbench --engine=$e --db="$DIR/db/sb-$e" $sb --threads=2 --rand_seed=42 prepare \
        | tee "$DIR/log/sb-prepare-$e-t$th.log" | tail -1
      "$T" sysbench --engine=$e --db="$DIR/db/sb-$e" $sb check | grep '^check .*xxh3=' \
        > "$DIR/log/sb-check-$e-t$th.txt"
      [ -n "$sums" ] && ! cmp -s "$sums" "$DIR/log/sb-check-$e-t$th.txt" \
        && echo "CHECKSUMS DIFFER: $sums $DIR/log/sb-check-$e-t$th.txt"
      sums="$DIR/log/sb-check-$e-t$th.txt"
    done
    for e in $order; do
      load
      "$T" sysbench --engine=$e --db="$DIR/db/sb-$e" $sb --threads=$th --time=$SB_TIME \
        --warmup_time=$SB_WARMUP --prewarm --report_interval=5 --rand_seed=42 \
        --results="$DIR/res/sysbench/$e-t$th" all run > "$DIR/log/sb-$e-t$th.log"
      grep -E "^prewarm" "$DIR/log/sb-$e-t$th.log"
      load
    done
    order=$(echo "$order" | tr ' ' '\n' | tac | tr '\n' ' ')
  done
  rm -rf "$DIR/db"/sb-*
  "$T" sysbench --results="$DIR/res/sysbench" --base=sqlite summary | tee "$DIR/log/sb-summary.txt"
}

# One engine at a time (prepare, run, delete): two databases of this size at once would take
# twice the shared disk. In the reverse of ENGINES' order (SQLite first by default).
tpcc_phase() {
  local tp="--warehouses=$TPCC_W --threads=$TPCC_THREADS --cache_size=$TPCC_CACHE"
  for e in $(echo "$ENGINES" | tr ' ' '\n' | tac); do
    rm -rf "$DIR/db/tpcc-$e"
    load
    /usr/bin/time -f "prepare wall %e s, user %U s, sys %S s, max RSS %M KB" \
      "$T" tpcc --engine=$e --db="$DIR/db/tpcc-$e" $tp prepare 2>&1 \
      | tee "$DIR/log/tpcc-prepare-$e.log" | tail -2
    echo "after load: $(du -sb "$DIR/db/tpcc-$e")"
    load
    "$T" tpcc --engine=$e --db="$DIR/db/tpcc-$e" $tp --time=$TPCC_TIME --report_interval=10 \
      --rand_seed=42 --results="$DIR/res/tpcc/$e-w$TPCC_W" run 2>&1 | tee "$DIR/log/tpcc-$e.log" \
      | grep -vE "^\[ " || true
    load
    echo "after run: $(du -sb "$DIR/db/tpcc-$e")"
    rm -rf "$DIR/db/tpcc-$e"
  done
}

# Post 002's rate limiter experiment on Talus: one prepared database copied for each setting.
ratelimit_phase() {
  local tp="--warehouses=$RL_W --threads=$TPCC_THREADS --cache_size=$TPCC_CACHE"
  rm -rf "$DIR/db/rl-base"
  "$T" tpcc --engine=talus --db="$DIR/db/rl-base" $tp prepare | tail -1
  for rl in $RL_RATES; do
    rm -rf "$DIR/db/rl"
    cp -a "$DIR/db/rl-base" "$DIR/db/rl"
    load
    "$T" tpcc --engine=talus --db="$DIR/db/rl" $tp --time=$RL_TIME --report_interval=10 \
      --rand_seed=42 --rate_limiter_bytes_per_sec=$rl --results="$DIR/res/ratelimit/rl-$rl" run \
      2>&1 | tee "$DIR/log/rl-$rl.log" | grep -vE "^\[ " || true
    du -sb "$DIR/db/rl"
  done
  rm -rf "$DIR/db/rl"
}

# Post 002's compression: LZ4 on every level (the default) against LZ4 above and ZSTD at the
# bottommost level, both loaded and run the same way (no rate limiter).
compression_phase() {
  local tp="--warehouses=$RL_W --threads=$TPCC_THREADS --cache_size=$TPCC_CACHE"
  for c in lz4 lz4-zstd; do
    local opts="--compression_type=lz4"
    [ "$c" = lz4-zstd ] && opts="--compression_per_level=kLZ4Compression --bottommost_compression=kZSTD"
    rm -rf "$DIR/db/cmp-$c"
    load
    "$T" tpcc --engine=talus --db="$DIR/db/cmp-$c" $tp $opts prepare | tail -1
    echo "after load: $(du -sb "$DIR/db/cmp-$c")"
    "$T" tpcc --engine=talus --db="$DIR/db/cmp-$c" $tp $opts --time=$RL_TIME --report_interval=10 \
      --rand_seed=42 --results="$DIR/res/compression/$c" run 2>&1 | tee "$DIR/log/cmp-$c.log" \
      | grep -vE "^\[ " || true
    echo "after run: $(du -sb "$DIR/db/cmp-$c")"
  done
  rm -rf "$DIR/db"/cmp-* "$DIR/db/rl-base"
}

for p in $PHASES; do
  echo "===== phase $p ($(date +%T))"
  "${p}_phase"
done
"$T" report --results="$DIR/res" --out="$DIR/report.html" --base=sqlite
