#!/usr/bin/env bash
# Column families against RocksDB 10.4.2's own db_bench: `--num_column_families=N`, fillrandom
# on a fresh database, then readrandom on it in a new process; order RocksDB, Talus, Talus,
# RocksDB per round (ABBA), every option passed explicitly to both; prints ops/s per run and
# the ratio of medians. Usage: bench/cf_compare.sh TALUS_BIN ROCKSDB_DB_BENCH DIR [ROUNDS] [N]
set -euo pipefail
talus=$1 rocks=$2 dir=$3 rounds=${4:-2} ncf=${5:-4}
num=${NUM:-1000000}
common=(--num="$num" --num_column_families="$ncf" --key_size=16 --value_size=100
  --compression_type=lz4 --cache_size=1073741824 --bloom_bits=10 --seed=1
  --write_buffer_size=67108864 --max_write_buffer_number=2 --max_background_jobs=2
  --level_compaction_dynamic_level_bytes=true --target_file_size_base=67108864
  --max_bytes_for_level_base=268435456 --level0_file_num_compaction_trigger=4
  --threads=1 --histogram=0 --statistics=0)
run() { # engine label
  local bin=$1 label=$2 db="$dir/$2"
  rm -rf "$db"
  local w r
  if [[ $label == rocksdb* ]]; then
    w=$("$bin" --db="$db" --benchmarks=fillrandom "${common[@]}" 2>/dev/null | awk '/^fillrandom/ {print $5}')
    r=$("$bin" --db="$db" --use_existing_db=1 --benchmarks=readrandom "${common[@]}" 2>/dev/null | awk '/^readrandom/ {print $5}')
  else
    w=$("$bin" db_bench --db="$db" --benchmarks=fillrandom "${common[@]}" 2>/dev/null | awk '/^fillrandom/ {print $5}')
    r=$("$bin" db_bench --db="$db" --use_existing_db=1 --benchmarks=readrandom "${common[@]}" 2>/dev/null | awk '/^readrandom/ {print $5}')
  fi
  rm -rf "$db"
  echo "$label fillrandom $w readrandom $r"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < rounds; i++)); do
  run "$rocks" rocksdb; run "$talus" talus; run "$talus" talus; run "$rocks" rocksdb
done | tee "$dir/runs.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$dir/runs.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for b, col in (("fillrandom", 2), ("readrandom", 4)):
    med = {e: statistics.median(float(r[col]) for r in rows if r[0] == e) for e in ("talus", "rocksdb")}
    print(f"{b}: talus {med['talus']:.0f} rocksdb {med['rocksdb']:.0f} ratio {med['talus'] / med['rocksdb']:.2f}")
PY
