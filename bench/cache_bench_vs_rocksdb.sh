#!/usr/bin/env bash
# talus cache_bench against RocksDB 10.4.2's own release cache_bench (bench/build_rocksdb_tools.sh),
# same command line for both, interleaved ABBA (RocksDB, Talus, Talus, RocksDB) per row, best of 2.
# Prints a markdown table of "Rough parallel ops/sec" and the Talus/RocksDB ratio.
#
# usage: bench/cache_bench_vs_rocksdb.sh [TALUS_BIN] [ROCKSDB_CACHE_BENCH]
#   defaults: target/release/talus (build with RUSTFLAGS="-C target-cpu=native"), /work/rocksdb-tools/bin/cache_bench
# env: OPS (1000000), CACHE_SIZE (268435456), THREADS ("1 2 8"), TYPES, EXTRA (flags added to every row)
set -euo pipefail
TALUS=${1:-target/release/talus}
ROCKS=${2:-/work/rocksdb-tools/bin/cache_bench}
OPS=${OPS:-1000000}
CACHE_SIZE=${CACHE_SIZE:-268435456}
THREADS=${THREADS:-"1 2 8"}
TYPES=${TYPES:-"lru_cache hyper_clock_cache auto_hyper_clock_cache"}
# RocksDB 10.4.2 has no --skewed; the "skewed" rows use a stronger --skew on both.
SKEWS=${SKEWS:-"default --skew=10"}
EXTRA=${EXTRA:-}

ops() { grep -o 'Rough parallel ops/sec = [0-9]*' | grep -o '[0-9]*$'; }
best() { if [ "$1" -gt "$2" ]; then echo "$1"; else echo "$2"; fi; }

echo "| cache_type | threads | lean | skew | Talus | RocksDB 10.4.2 | Talus/RocksDB |"
echo "|---|---|---|---|---|---|---|"
for type in $TYPES; do
  for t in $THREADS; do
    for lean in no yes; do
      for skew in $SKEWS; do
        args="--cache_type=$type --threads=$t --cache_size=$CACHE_SIZE --ops_per_thread=$OPS --seed=1 $EXTRA"
        [ "$lean" = yes ] && args="$args --lean"
        [ "$skew" != default ] && args="$args $skew"
        r1=$("$ROCKS" $args 2>/dev/null | ops)
        t1=$("$TALUS" cache_bench $args | ops)
        t2=$("$TALUS" cache_bench $args | ops)
        r2=$("$ROCKS" $args 2>/dev/null | ops)
        tb=$(best "$t1" "$t2"); rb=$(best "$r1" "$r2")
        ratio=$(awk -v a="$tb" -v b="$rb" 'BEGIN{printf "%.2f", a/b}')
        echo "| $type | $t | $lean | $skew | $t1 / $t2 | $r1 / $r2 | $ratio |"
      done
    done
  done
done
