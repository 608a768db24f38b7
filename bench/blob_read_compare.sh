#!/usr/bin/env bash
# Reads with blob files against RocksDB 10.4.2's own db_bench: per value size, one database per
# engine filled by fillrandom and compacted (`compact`, so both read the same shape: one level;
# the blob options of bench/blob_compare.sh, every option passed
# explicitly to both), then readrandom and seekrandom (--seek_nexts=NEXTS, default 10, so each
# seek loads values) in processes ordered RocksDB, Talus, Talus, RocksDB (ABBA) on those
# databases. Prints ops/s per run, the load average before and after, and the medians' ratios.
# Usage: bench/blob_read_compare.sh TALUS_BIN ROCKSDB_DB_BENCH DIR [VALUE_SIZES...]
# MB megabytes of values per database (default 400); READS reads per run (default 100000).
set -euo pipefail
talus=$1 rocks=$2 dir=$3
shift 3
[[ $# -gt 0 ]] && sizes=("$@") || sizes=(1024 4096 16384)
mb=${MB:-400} reads=${READS:-100000} nexts=${NEXTS:-10}
mkdir -p "$dir"
common=(--key_size=16 --compression_type=none --seed=1 --write_buffer_size=16777216
  --target_file_size_base=16777216 --max_bytes_for_level_base=67108864
  --max_background_jobs=2 --cache_size=67108864 --level_compaction_dynamic_level_bytes=true
  --level0_file_num_compaction_trigger=4 --max_write_buffer_number=2 --bloom_bits=10
  --threads=1 --histogram=0 --statistics=0
  --enable_blob_files=true --min_blob_size=1024 --enable_blob_garbage_collection=true
  --blob_garbage_collection_age_cutoff=0.25 --blob_garbage_collection_force_threshold=1.0
  --blob_file_size=268435456 --blob_compression_type=none)
pre() { [[ $1 == talus ]] && echo db_bench || true; }
bin() { [[ $1 == talus ]] && echo "$talus" || echo "$rocks"; }
for vs in "${sizes[@]}"; do
  num=$((mb * 1048576 / vs))
  flags=(--num="$num" --value_size="$vs" "${common[@]}")
  for e in rocksdb talus; do
    rm -rf "$dir/db-$e"
    # shellcheck disable=SC2046
    "$(bin $e)" $(pre $e) --db="$dir/db-$e" --benchmarks=fillrandom,compact "${flags[@]}" >"$dir/out-fill-$e" 2>&1
  done
  echo "# value_size $vs load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  for e in rocksdb talus talus rocksdb; do
    # shellcheck disable=SC2046
    "$(bin $e)" $(pre $e) --db="$dir/db-$e" --use_existing_db=1 --reads="$reads" \
      --seek_nexts="$nexts" --benchmarks=readrandom,seekrandom "${flags[@]}" >"$dir/out-read" 2>&1
    echo "$e $vs $(awk '$1 == "readrandom" || $1 == "seekrandom" {printf "%s %s ", $1, $5}' "$dir/out-read")"
  done
  echo "# value_size $vs load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -rf "$dir/db-rocksdb" "$dir/db-talus"
done | tee "$dir/runs.txt"
python3 - "$dir/runs.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
for vs in sorted({r[1] for r in rows}, key=int):
    for b, col in (("readrandom", 3), ("seekrandom", 5)):
        med = {e: statistics.median(float(r[col]) for r in rows if r[0] == e and r[1] == vs)
               for e in ("talus", "rocksdb")}
        print(f"{vs} {b}: talus {med['talus']:.0f} rocksdb {med['rocksdb']:.0f} "
              f"ratio {med['talus'] / med['rocksdb']:.2f}")
PY
