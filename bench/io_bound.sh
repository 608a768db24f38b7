#!/usr/bin/env bash
# The IO-bound insert benchmark of issue 13 (post 003's table): Talus and SQLite with 0, 1, 2 and
# 3 secondary indexes, the database many times larger than what each engine may cache it in.
#
#   Talus:  --use_direct_reads --use_direct_io_for_flush_and_compaction (tables bypass the page
#           cache), partitioned index and filters (--partition_index_and_filters,
#           --cache_index_and_filter_blocks), a CACHE-byte block cache.
#   SQLite: no O_DIRECT, so: PRAGMA cache_size = CACHE bytes, PRAGMA mmap_size=0, and every
#           DROP_MS ms the benchmark process measures (mincore) then drops
#           (posix_fadvise(POSIX_FADV_DONTNEED)) the page cache of the files under its --db.
#   Both engines get the same dropping (for Talus it only matters for the WAL and metadata files),
#   and the report shows how much page cache the files held (page_cache_max_kb).
#
# Nothing here needs root: no cgroup is created and the machine's caches are never dropped; only
# the benchmark's own files are advised. Steps per run: l.i0 (NUM rows, PK order), l.x (create
# the indexes), l.i1 (NUM_I1 rows with index maintenance: the measured step). The four index
# counts are run engine after engine (talus, sqlite) for each count, then `talus report` renders
# the table and the bar chart, and headless Chromium screenshots it. Databases are deleted after
# each run; results stay in OUT_DIR.
#
# usage: bench/io_bound.sh [OUT_DIR]          (default /work/scratch/io_bound)
# env:   T (talus binary, default target/release/talus), NUM (4000000), NUM_I1_TALUS (8000000),
#        NUM_I1_SQLITE (1000000), CACHE (67108864), DROP_MS (300), INDEXES ("0 1 2 3"),
#        ENGINES ("talus sqlite"), DATA_LENGTH (256), EXTRA (flags added to every run)
# l.i1 is longer for Talus so that it runs long enough for its compactions to reach a steady
# state (SQLite is IO-bound from its first insert); each engine's rates are compared across index
# counts with the same row counts, as in the post.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/work/scratch/io_bound}
T=${T:-target/release/talus}
NUM=${NUM:-4000000}
NUM_I1_TALUS=${NUM_I1_TALUS:-8000000}
NUM_I1_SQLITE=${NUM_I1_SQLITE:-1000000}
CACHE=${CACHE:-67108864}
DROP_MS=${DROP_MS:-300}
INDEXES=${INDEXES:-"0 1 2 3"}
ENGINES=${ENGINES:-"talus sqlite"}
DATA_LENGTH=${DATA_LENGTH:-256}
EXTRA=${EXTRA:-}
[ -x "$T" ] || cargo build --release -q -p talus-cli

COMMON="--steps=l.i0,l.x,l.i1 --num=$NUM --data_length=$DATA_LENGTH \
--data_random=0.5 --cache_size=$CACHE --drop_page_cache_ms=$DROP_MS --interval=10 --seed=1"
TALUS_ONLY="--use_direct_reads --use_direct_io_for_flush_and_compaction \
--partition_index_and_filters --cache_index_and_filter_blocks"

mkdir -p "$OUT"
DB="$OUT/db"
trap 'rm -rf "$DB"' EXIT
for n in $INDEXES; do
  for e in $ENGINES; do
    name="$e-$n"
    rm -rf "$DB" "$OUT/$name"
    flags="$COMMON --secondary_indexes=$n --num_i1=$NUM_I1_SQLITE"
    [ "$e" = talus ] && flags="$COMMON --secondary_indexes=$n --num_i1=$NUM_I1_TALUS $TALUS_ONLY"
    echo "== $name" >&2
    # shellcheck disable=SC2086
    "$T" ibench --engine="$e" --db="$DB" $flags $EXTRA --results="$OUT/$name" \
      > "$OUT/$name.stdout" 2> "$OUT/$name.stderr"
    grep '^summary l.i1' "$OUT/$name.stdout" >&2
    rm -rf "$DB"
  done
done
"$T" report --results="$OUT" --out="$OUT/report.html"
if command -v chromium >/dev/null; then
  chromium --headless --disable-gpu --no-sandbox --window-size=1300,2400 \
    --screenshot="$OUT/report.png" "file://$(realpath "$OUT")/report.html" 2>/dev/null || true
fi
echo "report: $OUT/report.html" >&2
