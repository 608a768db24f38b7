#!/usr/bin/env bash
# Calibrates the harness's RocksDB adapter (`talus db_bench --engine=rocksdb`, built by
# bench/build_rocksdb_adapter.sh) against RocksDB's own db_bench (bench/build_rocksdb_tools.sh) by
# instruction count: both run one db_bench step under callgrind with the same flags
# (bench/compare.py's COMMON list, `--seed=1`), every thread counted on its own. Instruction
# counts do not depend on the host's load, which on a shared machine moves timings by far more
# than the 3% the calibration is about (issue 12).
#
# usage: bench/calibrate_adapter.sh STEP [NUM] [EXTRA_FLAGS...]
#   STEP: a db_bench benchmark (fillseq, fillrandom, overwrite, readrandom, seekrandom, ...).
#         fill* steps start from an empty database; the others from a copy, for each tool, of
#         one database RocksDB's db_bench makes first (fillrandom,compact of NUM keys).
#   NUM:  keys (default 200000; in small runs one-time costs in the worker thread weigh in
#         differently in the two tools: fillseq reads 0.90 at 20K keys, 0.99 at 200K).
#   EXTRA_FLAGS go to both, e.g. --reads=20000 --seek_nexts=10.
# env: ADAPTER (/work/target-rdb/release/talus), DB_BENCH (/work/rocksdb-tools/bin/db_bench),
#      OUT (a new directory under /tmp): logs and callgrind files.
# Prints each tool's threads by instructions, the step's operations, the busiest thread's
# instructions per operation, and adapter / db_bench for the busiest thread (the step's worker)
# and for all threads but the main one (worker, flushes, compactions; the main thread opens,
# prints options and reports, outside the timed step).
# Both run at once (about 30 s for 200K fillrandom; a 1M-key fill takes about 5 minutes).
# Never in CI (needs the two RocksDB builds).
set -euo pipefail
cd "$(dirname "$0")"
STEP=${1:?usage: bench/calibrate_adapter.sh STEP [NUM] [EXTRA_FLAGS...]}
NUM=${2:-200000}
shift $(($# >= 2 ? 2 : 1))
ADAPTER=${ADAPTER:-/work/target-rdb/release/talus}
DB_BENCH=${DB_BENCH:-/work/rocksdb-tools/bin/db_bench}
OUT=${OUT:-$(mktemp -d /tmp/talus-calibrate.XXXXXX)}
mkdir -p "$OUT"
FLAGS=$(python3 -c 'import compare; print(" ".join(compare.COMMON))')

case "$STEP" in
  fill*) existing=0 ;;
  *) existing=1 ;;
esac
if [ "$existing" = 1 ]; then
  rm -rf "$OUT/base"
  # shellcheck disable=SC2086
  "$DB_BENCH" --benchmarks=fillrandom,compact --db="$OUT/base" --num="$NUM" --seed=1 $FLAGS \
    >/dev/null 2>&1
fi

for tool in adapter db_bench; do
  rm -rf "$OUT/db_$tool" "$OUT/cg.$tool".*
  if [ "$existing" = 1 ]; then cp -r "$OUT/base" "$OUT/db_$tool"; fi
  if [ "$tool" = adapter ]; then
    cmd=("$ADAPTER" db_bench --engine=rocksdb)
  else
    cmd=("$DB_BENCH")
  fi
  # shellcheck disable=SC2086
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$OUT/cg.$tool.%p" \
    "${cmd[@]}" --benchmarks="$STEP,waitforcompaction" --use_existing_db="$existing" \
    --db="$OUT/db_$tool" --num="$NUM" --seed=1 $FLAGS "$@" >"$OUT/$tool.log" 2>&1 &
done
wait

python3 - "$OUT" "$STEP" <<'PY'
import glob, os, re, sys
out, step = sys.argv[1], sys.argv[2]
res = {}
for tool in ("adapter", "db_bench"):
    threads, main = [], 0
    for f in glob.glob(os.path.join(out, f"cg.{tool}.*")):
        with open(f, errors="replace") as fh:
            for line in fh:
                if line.startswith("summary:"):
                    n = int(line.split()[1])
                    # Thread 1 (file suffix -01) is the main thread: options, open, reports.
                    if f.endswith("-01"):
                        main = n
                    else:
                        threads.append(n)
                    break
    threads.sort(reverse=True)
    log = open(os.path.join(out, f"{tool}.log"), errors="replace").read()
    m = re.search(rf"^{re.escape(step)}\s+:.*?(\d+) operations", log, re.M)
    if not threads or not m:
        sys.exit(f"{tool}: no callgrind counts or no {step} line; see {out}/{tool}.log")
    ops = int(m.group(1))
    res[tool] = (threads, ops)
    print(f"{tool:9} {ops} ops; main thread {main:,}; other threads (instructions): "
          f"{' '.join(f'{t:,}' for t in threads[:8])}")
    print(f"{'':9} busiest thread per op: {threads[0] / ops:,.0f}; other threads together: "
          f"{sum(threads):,}")
(a, ao), (d, do) = res["adapter"], res["db_bench"]
if ao != do:
    print(f"warning: operations differ ({ao} vs {do})")
print(f"adapter / db_bench: busiest thread per op {a[0] / ao / (d[0] / do):.3f}, "
      f"all threads but main {sum(a) / sum(d):.3f}  (files in {out})")
PY
