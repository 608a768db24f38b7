#!/usr/bin/env bash
# Talus against RocksDB under the same table layer (issue 35's sysbench and TPC-C targets), on a
# small data set in minutes: engines interleaved ABBA (talus, rocksdb, rocksdb, talus), the same
# flags and seeds for both (every engine option by RocksDB's name), the load average logged
# around each run. Ratios: bench/table_engines_ratio.py DIR.
#
#   bench/table_engines_ab.sh DIR [sysbench] [tpcc]      (default: both)
#
# TALUS: the binary (default target/rdb/release/talus, built by bench/build_rocksdb_adapter.sh
# target/rdb; copied to DIR/bin). Sizes (environment, defaults):
#   SB_ROWS=100000 SB_TIME=3 SB_WARMUP=1 SB_TESTS=all  TPCC_W=2 TPCC_TIME=60 TPCC_THREADS=1
# sysbench: each engine's table is prepared once (seeded), flushed and compacted (`flush`),
# checksummed (`check`, equal across engines or the script says so), and each run in ABBA order
# starts from a copy of it. (Not the same database twice: a test runs for a time, so the faster
# engine's write tests write more, and a second pass would read a different database on each
# engine: more versions to skip where more was written.)
# TPC-C: four loads in ABBA order (prepare's rows/s is the load rate), a run on each (tpmC,
# the consistency conditions checked after each run), all on --threads=TPCC_THREADS.
set -euo pipefail
DIR=${1:?usage: bench/table_engines_ab.sh DIR [sysbench] [tpcc]}
shift
PHASES=${*:-sysbench tpcc}
SRC=${TALUS:-$(dirname "$0")/../target/rdb/release/talus}
mkdir -p "$DIR/bin" "$DIR/res" "$DIR/log" "$DIR/db"
cp "$SRC" "$DIR/bin/talus"
T="$DIR/bin/talus"
SB_ROWS=${SB_ROWS:-100000}
SB_TIME=${SB_TIME:-3}
SB_WARMUP=${SB_WARMUP:-1}
SB_TESTS=${SB_TESTS:-all}
TPCC_W=${TPCC_W:-2}
TPCC_TIME=${TPCC_TIME:-60}
TPCC_THREADS=${TPCC_THREADS:-1}
ABBA="talus rocksdb rocksdb talus"

load() { echo "== $(date +%T) $1 load: $(uptime | sed 's/.*load average: //')"; }

sysbench_phase() {
  local sb="--tables=1 --table_size=$SB_ROWS --cache_size=268435456" e i=0 sums=""
  for e in talus rocksdb; do
    rm -rf "$DIR/db/sb-$e"
    load "sysbench prepare $e"
    "$T" sysbench --engine=$e --db="$DIR/db/sb-$e" $sb --rand_seed=42 prepare \
      > "$DIR/log/sb-prepare-$e.log"
    "$T" sysbench --engine=$e --db="$DIR/db/sb-$e" $sb flush > /dev/null
    "$T" sysbench --engine=$e --db="$DIR/db/sb-$e" $sb check | grep '^check .*xxh3=' \
      > "$DIR/log/sb-check-$e.txt"
    if [ -n "$sums" ] && ! cmp -s "$sums" "$DIR/log/sb-check-$e.txt"; then
      echo "CHECKSUMS DIFFER: $sums $DIR/log/sb-check-$e.txt"
    fi
    sums="$DIR/log/sb-check-$e.txt"
  done
  for e in $ABBA; do
    i=$((i + 1))
    load "sysbench run $i $e"
    rm -rf "$DIR/db/run"
    cp -a "$DIR/db/sb-$e" "$DIR/db/run"
    "$T" sysbench --engine=$e --db="$DIR/db/run" $sb --threads=1 --time="$SB_TIME" \
      --warmup_time="$SB_WARMUP" --prewarm --rand_seed=42 \
      --results="$DIR/res/sysbench/$e-$i" "$SB_TESTS" run > "$DIR/log/sb-$e-$i.log"
  done
  load "sysbench end"
  rm -rf "$DIR/db"/sb-*
}

tpcc_phase() {
  local tp="--warehouses=$TPCC_W --threads=$TPCC_THREADS --cache_size=268435456" e i=0
  for e in $ABBA; do
    i=$((i + 1))
    rm -rf "$DIR/db/tpcc-$e-$i"
    load "tpcc prepare $i $e"
    "$T" tpcc --engine=$e --db="$DIR/db/tpcc-$e-$i" $tp --rand_seed=42 prepare \
      > "$DIR/log/tpcc-prepare-$e-$i.log" 2>&1
    tail -1 "$DIR/log/tpcc-prepare-$e-$i.log"
  done
  i=0
  for e in $ABBA; do
    i=$((i + 1))
    load "tpcc run $i $e"
    /usr/bin/time -f "process CPU: user %U s, sys %S s, wall %e s" \
      "$T" tpcc --engine=$e --db="$DIR/db/tpcc-$e-$i" $tp --time="$TPCC_TIME" --rand_seed=42 \
      --report_interval=0 --results="$DIR/res/tpcc/$e-$i" run > "$DIR/log/tpcc-$e-$i.log" 2>&1 \
      || echo "tpcc run $i $e: exit $? (see $DIR/log/tpcc-$e-$i.log)"
    grep -iE "tpmC|transactions:|consistency:|process CPU" "$DIR/log/tpcc-$e-$i.log" | tail -4
    rm -rf "$DIR/db/tpcc-$e-$i"
  done
  load "tpcc end"
}

for p in $PHASES; do
  echo "===== phase $p ($(date +%T))"
  "${p}_phase"
done
