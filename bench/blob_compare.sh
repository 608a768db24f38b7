#!/usr/bin/env bash
# Blob files (key-value separation) against RocksDB 10.4.2's own db_bench: fillrandom on a fresh
# database, then overwrite on it in a new process (so each process's compaction stats are its
# own benchmark's); order RocksDB, Talus, Talus, RocksDB per value size (ABBA), every option
# passed explicitly to both; then Talus overwrite without blob files. Prints ops/s and W-Amp
# (the compaction stats' Sum row) per run, and the load average before and after.
# Usage: bench/blob_compare.sh TALUS_BIN ROCKSDB_DB_BENCH DIR [VALUE_SIZES...]
# Each run writes about MB megabytes (default 800): --num = MB MiB / value size.
# TALUS_VARIANT="flags" adds two Talus runs with those flags too, labelled talus_v (order R T V
# V T R), e.g. TALUS_VARIANT=--compaction_thread_nice=0 for RocksDB's thread priorities.
set -euo pipefail
talus=$1 rocks=$2 dir=$3
shift 3
[[ $# -gt 0 ]] && sizes=("$@") || sizes=(1024 4096 16384)
mb=${MB:-800}
mkdir -p "$dir"
common=(--key_size=16 --compression_type=none --seed=1 --write_buffer_size=16777216
  --target_file_size_base=16777216 --max_bytes_for_level_base=67108864
  --max_background_jobs=2 --cache_size=67108864 --level_compaction_dynamic_level_bytes=true
  --level0_file_num_compaction_trigger=4 --max_write_buffer_number=2 --bloom_bits=10
  --threads=1 --histogram=0 --statistics=0)
blob=(--enable_blob_files=true --min_blob_size=1024 --enable_blob_garbage_collection=true
  --blob_garbage_collection_age_cutoff=0.25 --blob_garbage_collection_force_threshold=1.0
  --blob_file_size=268435456 --blob_compression_type=none)
noblob=(--enable_blob_files=false)
# ops/s of benchmark $2 and the write amplification in db_bench output $1: bytes written by
# flushes and compactions (SSTs and blob files: "Cumulative compaction: X GB write") over the
# bytes the benchmark wrote ("Cumulative writes: ... ingest: Y GB"); then the same from the
# level table's Sum row (Write(GB) + Wblob(GB)).
parse() {
  awk -v b="$2" '
    $1 == b {ops = $5}
    /^Cumulative compaction:/ && w == "" {w = $3}
    $1 == "Sum" && sw == "" {sw = $9 + $NF}
    /^Cumulative writes:/ && ing == "" {for (i = 1; i < NF; i++) if ($i == "ingest:") ing = $(i + 1)}
    END {printf "%s %s %s", ops, (ing > 0 ? sprintf("%.2f", w / ing) : "?"), (ing > 0 ? sprintf("%.2f", sw / ing) : "?")}' "$1"
}
run() { # bin label value_size blob-flags...
  local bin=$1 label=$2 vs=$3
  shift 3
  local db="$dir/db-$label" num=$((mb * 1048576 / vs)) pre=()
  [[ $label == talus* ]] && pre=(db_bench)
  [[ $label == talus_v ]] && set -- "$@" ${TALUS_VARIANT:-}
  rm -rf "$db"
  local flags=(--num="$num" --value_size="$vs" "${common[@]}" "$@")
  "$bin" "${pre[@]}" --db="$db" --benchmarks=fillrandom,stats "${flags[@]}" >"$dir/out-fill" 2>&1
  "$bin" "${pre[@]}" --db="$db" --use_existing_db=1 --benchmarks=overwrite,stats "${flags[@]}" \
    >"$dir/out-over" 2>&1
  local size
  size=$(du -sm "$db" | cut -f1)
  rm -rf "$db"
  echo "$label $vs fillrandom $(parse "$dir/out-fill" fillrandom) overwrite $(parse "$dir/out-over" overwrite) db_mb $size"
}
for vs in "${sizes[@]}"; do
  echo "# value_size $vs load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  run "$rocks" rocksdb "$vs" "${blob[@]}"
  run "$talus" talus "$vs" "${blob[@]}"
  if [[ -n ${TALUS_VARIANT:-} ]]; then
    run "$talus" talus_v "$vs" "${blob[@]}"
    run "$talus" talus_v "$vs" "${blob[@]}"
  fi
  run "$talus" talus "$vs" "${blob[@]}"
  run "$rocks" rocksdb "$vs" "${blob[@]}"
  run "$talus" talus_noblob "$vs" "${noblob[@]}"
  echo "# value_size $vs load after: $(cut -d' ' -f1-3 /proc/loadavg)"
done | tee "$dir/runs.txt"
python3 - "$dir/runs.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
for vs in sorted({r[1] for r in rows}, key=int):
    for b, col in (("fillrandom", 3), ("overwrite", 7)):
        med = {e: statistics.median(float(r[col]) for r in rows if r[0] == e and r[1] == vs)
               for e in ("talus", "talus_v", "rocksdb")
               if any(r[0] == e and r[1] == vs for r in rows)}
        line = f"{vs} {b}: talus {med['talus']:.0f} rocksdb {med['rocksdb']:.0f} "
        line += f"ratio {med['talus'] / med['rocksdb']:.2f}"
        if "talus_v" in med:
            line += f" talus_v {med['talus_v']:.0f} ratio {med['talus_v'] / med['rocksdb']:.2f}"
        print(line)
PY
