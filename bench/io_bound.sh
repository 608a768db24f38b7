#!/usr/bin/env bash
# Post 003's IO-bound insert benchmark on Talus, RocksDB and SQLite, interleaved: one collection
# written by CLIENTS clients (--shared_table), 0 to 3 non-unique secondary indexes, plus one run
# with a UNIQUE first index (every insert must read to check it: what read-free maintenance
# saves), a 256-byte pad 50% compressible, and the database many times larger than what each
# engine may cache it in (a cache about 1/10 of the data).
#
#   Talus, RocksDB: the same talus-table layer over each engine (MyRocks's design), every engine
#           option by its RocksDB name to both: --use_direct_reads
#           --use_direct_io_for_flush_and_compaction (tables bypass the page cache), partitioned
#           index and filters (--partition_index_and_filters --cache_index_and_filter_blocks), a
#           CACHE-byte block cache. RocksDB refuses to run if its OPTIONS differ from Talus's
#           (both files are saved beside each run's results).
#   SQLite: no O_DIRECT, so: PRAGMA cache_size = CACHE bytes, PRAGMA mmap_size=0, and every
#           DROP_MS ms the benchmark process measures (mincore) then drops
#           (posix_fadvise(POSIX_FADV_DONTNEED)) the page cache of the files under its --db.
#   Every engine gets the same dropping (for Talus and RocksDB it only matters for the WAL and
#   metadata files), and the report shows how much page cache the files held.
#
# Nothing here needs root: no cgroup is created and the machine's caches are never dropped; only
# the benchmark's own files are advised. Steps per run: l.i0 (NUM rows per client, PK order),
# l.x (create the indexes), l.i1 (NUM_I1 rows per client with index maintenance: the measured
# step), check (a content checksum of every table and index: equal across engines, since rows
# are a function of --seed and the row id; compared at the end). The runs go index count by
# index count, the engine order reversed at each count (ABC, CBA, ...), so a drift of the
# machine over the hour does not favour one engine. Then `talus report` renders post 003's table
# (ipsAvg-ipsP95-dbSize-rssSize and the share of the PK-only rate; r/i, rKB/i, wKB/i, CPU µs/i)
# and headless Chromium screenshots it. Databases are deleted after each run; results stay in
# OUT_DIR. Run it on a quiet machine: nothing else may run while it measures.
#
# usage: bench/io_bound.sh [OUT_DIR]          (default /work/scratch/io_bound)
# env:   T (a talus built with --features rocksdb, default target/rdb/release/talus: see
#        bench/build_rocksdb_adapter.sh), CLIENTS (10), NUM (400000 per client), NUM_I1 (200000
#        per client), NUM_I1_SQLITE (50000 per client), CACHE (67108864), DROP_MS (300),
#        INDEXES ("0 1 2 3 u": u is 3 indexes, the first unique), ENGINES ("talus rocksdb
#        sqlite"), DATA_LENGTH (256), EXTRA (flags added to every run)
# SQLite's l.i1 is shorter (it is IO-bound from its first insert); each engine's rates are
# compared across index counts with the same row counts, as in the post.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/work/scratch/io_bound}
T=${T:-target/rdb/release/talus}
CLIENTS=${CLIENTS:-10}
NUM=${NUM:-400000}
NUM_I1=${NUM_I1:-200000}
NUM_I1_SQLITE=${NUM_I1_SQLITE:-50000}
CACHE=${CACHE:-67108864}
DROP_MS=${DROP_MS:-300}
INDEXES=${INDEXES:-"0 1 2 3 u"}
ENGINES=${ENGINES:-"talus rocksdb sqlite"}
DATA_LENGTH=${DATA_LENGTH:-256}
EXTRA=${EXTRA:-}
[ -x "$T" ] || { echo "no $T: build it with bench/build_rocksdb_adapter.sh target/rdb" >&2; exit 1; }
if [[ " $ENGINES " == *" rocksdb "* ]] && ! strings "$T" | grep -q talus_tbl_open; then
  echo "$T has no RocksDB backend: build it with --features rocksdb (bench/build_rocksdb_adapter.sh)" >&2
  exit 1
fi

COMMON="--steps=l.i0,l.x,l.i1,check --clients=$CLIENTS --shared_table --num=$NUM \
--data_length=$DATA_LENGTH --data_random=0.5 --cache_size=$CACHE --drop_page_cache_ms=$DROP_MS \
--interval=10 --seed=1"
TABLE_LAYER="--use_direct_reads --use_direct_io_for_flush_and_compaction \
--partition_index_and_filters --cache_index_and_filter_blocks"

mkdir -p "$OUT"
DB="$OUT/db"
trap 'rm -rf "$DB"' EXIT
order="$ENGINES"
for n in $INDEXES; do
  for e in $order; do
    name="$e-$n"
    rm -rf "$DB" "$OUT/$name"
    count=$n; unique=""
    [ "$n" = u ] && { count=3; unique="--unique_index"; }
    flags="$COMMON --secondary_indexes=$count $unique"
    if [ "$e" = sqlite ]; then
      flags="$flags --num_i1=$NUM_I1_SQLITE"
    else
      flags="$flags --num_i1=$NUM_I1 $TABLE_LAYER"
    fi
    echo "== $name" >&2
    # shellcheck disable=SC2086
    "$T" ibench --engine="$e" --db="$DB" $flags $EXTRA --results="$OUT/$name" \
      > "$OUT/$name.stdout" 2> "$OUT/$name.stderr"
    grep '^summary l.i1' "$OUT/$name.stdout" >&2
    rm -rf "$DB"
  done
  order=$(echo "$order" | tr ' ' '\n' | tac | tr '\n' ' ')
done
# The same rows on every engine: the check step's lines must agree (SQLite's l.i1 is shorter, so
# its lines are compared only when NUM_I1_SQLITE equals NUM_I1).
for n in $INDEXES; do
  sums=""
  for e in $ENGINES; do
    [ "$e" = sqlite ] && [ "$NUM_I1" != "$NUM_I1_SQLITE" ] && continue
    s=$(grep '^check ' "$OUT/$e-$n.stdout" | md5sum | cut -d' ' -f1)
    [ -n "$sums" ] && [ "$s" != "$sums" ] && echo "CHECKSUMS DIFFER at $n: see $OUT/*-$n.stdout" >&2
    sums=$s
  done
done
"$T" report --results="$OUT" --out="$OUT/report.html"
if command -v chromium >/dev/null; then
  chromium --headless --disable-gpu --no-sandbox --window-size=1300,2400 \
    --screenshot="$OUT/report.png" "file://$(realpath "$OUT")/report.html" 2>/dev/null || true
fi
echo "report: $OUT/report.html" >&2
