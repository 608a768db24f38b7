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
#   RL_W=20 RL_TIME=360 RL_RATES="0 1048576 2097152 4194304" (and post 002's device below)
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

# Post 002's experiments on post 002's device. Every engine runs under the IO throttle
# (IO_LIMIT: KVM's total_iops_sec=1000 and total_bytes_sec=16384000, reads and writes together;
# Talus through its Fs, RocksDB through talus-table's throttled rocksdb::FileSystem, SQLite
# through the tools' throttled VFS, all on the same token buckets and counting rule: see
# docs/design/throttle.md). Reads are direct (P2_DIRECT) so the block cache
# (P2_CACHE) is the only cache and a miss is a device read, as a capped disk with no page cache
# would see it. Each engine's database is prepared once per compression, uncapped, and copied
# for each run. Compression: post 002's MyRocks string (LZ4 on every level, ZSTD level 1 at the
# bottommost: compression_opts=-14:1:0) for the rate limiter runs, against LZ4 on every level
# (rate limiter off). Engines interleave: the order reverses at each setting (ABBA).
#   IO_LIMIT="--io_limit_iops=1000 --io_limit_bytes_per_sec=16384000"
#   P2_DIRECT="--use_direct_reads=true --use_direct_io_for_flush_and_compaction=true"
#   P2_CACHE=134217728  P2_SETTLE=30
IO_LIMIT=${IO_LIMIT:-"--io_limit_iops=1000 --io_limit_bytes_per_sec=16384000"}
P2_DIRECT=${P2_DIRECT:-"--use_direct_reads=true --use_direct_io_for_flush_and_compaction=true"}
P2_CACHE=${P2_CACHE:-134217728}
P2_SETTLE=${P2_SETTLE:-30}
CMP_lz4="--compression_type=lz4"
CMP_zstd1="--compression_per_level=kLZ4Compression --bottommost_compression=kZSTD --compression_opts=-14:1:0"

# The engine's flags for one run: every engine gets the cap.
p2_flags() { # engine compression
  local f="--warehouses=$RL_W --threads=$TPCC_THREADS --cache_size=$P2_CACHE $IO_LIMIT"
  [ "$1" = sqlite ] && { echo "$f"; return; }
  local c="CMP_$2"
  echo "$f $P2_DIRECT ${!c}"
}

# Prepares DIR/db/p2-ENGINE-COMPRESSION once (uncapped: the load is not what is measured).
p2_prepare() { # engine compression
  local base="$DIR/db/p2-$1-$2"
  [ -d "$base" ] && return
  local f="--warehouses=$RL_W --threads=$TPCC_THREADS --cache_size=$P2_CACHE"
  local c="CMP_$2"
  [ "$1" != sqlite ] && f="$f ${!c}"
  load
  /usr/bin/time -f "prepare $1 $2: wall %e s, max RSS %M KB" \
    "$T" tpcc --engine=$1 --db="$base" $f prepare 2>&1 | tail -2
  # A short uncapped run settles the tree (the load leaves its last memtables in L0; their
  # compaction would otherwise fall in every measured run's first minute).
  "$T" tpcc --engine=$1 --db="$base" $f --time=$P2_SETTLE --rand_seed=7 --skip_check run \
    > "$DIR/log/p2-settle-$1-$2.log" 2>&1
  echo "after load and ${P2_SETTLE}s settle: $(du -sb "$base")"
}

# One measured run on a copy of the prepared database.
p2_run() { # engine compression rate name
  local db="$DIR/db/p2-run"
  rm -rf "$db"
  cp -a "$DIR/db/p2-$1-$2" "$db"
  load
  "$T" tpcc --engine=$1 --db="$db" $(p2_flags "$1" "$2") --rate_limiter_bytes_per_sec=$3 \
    --time=$RL_TIME --report_interval=10 --rand_seed=42 --results="$DIR/res/$4" run 2>&1 \
    | tee "$DIR/log/$(echo "$4" | tr / -).log" | grep -vE "^\[ " || true
  echo "after run: $(du -sb "$db")"
  load
  rm -rf "$db"
}

# (Empty when ENGINES is only sqlite: grep's "no match" must not end the script under pipefail.)
p2_engines() { echo "$ENGINES" | tr ' ' '\n' | { grep -v sqlite || true; } | tr '\n' ' '; }

# Post 002's rate limiter experiment: off, 1, 2 and 4 MB/s (RL_RATES), each engine with post
# 002's compression; SQLite (no rate limiter, no compression) once, with the first setting.
ratelimit_phase() {
  local order
  order=$(p2_engines)
  for e in $order; do p2_prepare "$e" zstd1; done
  for rl in $RL_RATES; do
    for e in $order; do p2_run "$e" zstd1 "$rl" "ratelimit/$e-rl$rl"; done
    if [ "$rl" = "$(echo $RL_RATES | cut -d' ' -f1)" ] && echo "$ENGINES" | grep -qw sqlite; then
      p2_prepare sqlite none
      p2_run sqlite none 0 "ratelimit/sqlite"
      rm -rf "$DIR/db/p2-sqlite-none"
    fi
    order=$(echo "$order" | tr ' ' '\n' | { grep . || true; } | tac | tr '\n' ' ')
  done
}

# Post 002's compression: LZ4 on every level against post 002's string (the rate limiter off).
# The second is the rate limiter phase's first run when that phase ran (not repeated).
compression_phase() {
  local order
  order=$(p2_engines)
  for c in lz4 zstd1; do
    for e in $order; do
      [ "$c" = zstd1 ] && [ -d "$DIR/res/ratelimit/$e-rl0" ] && continue
      p2_prepare "$e" "$c"
      p2_run "$e" "$c" 0 "compression/$e-$c"
    done
    order=$(echo "$order" | tr ' ' '\n' | { grep . || true; } | tac | tr '\n' ' ')
  done
  rm -rf "$DIR/db"/p2-*
}

for p in $PHASES; do
  echo "===== phase $p ($(date +%T))"
  "${p}_phase"
done
rm -rf "$DIR/db"/p2-*
base=""
[ -d "$DIR/res/sysbench" ] && base="--base=sqlite"
"$T" report --results="$DIR/res" --out="$DIR/report.html" $base
