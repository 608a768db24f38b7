#!/usr/bin/env bash
# Fuzzes every target for SECONDS (default 60) each and prints executions, corpus size and
# crashes per target. Usage: fuzz/run.sh [seconds]. Needs cargo-fuzz (`cargo install
# cargo-fuzz`); on a stable toolchain it sets RUSTC_BOOTSTRAP=1 (cargo-fuzz passes -Z flags for
# AddressSanitizer). Seeds: fuzz/seeds/<target>/.
# FUZZ_RUNS=N runs each target for N executions instead (no time limit; issue 34's figure is
# 10^7 per target). FUZZ_TARGETS="a b" picks targets (default: all five).
# Exits non-zero if any target crashed (the artifact is in fuzz/artifacts/<target>/).
set -uo pipefail
secs="${1:-60}"
cd "$(dirname "$0")"
if ! command -v cargo-fuzz >/dev/null; then
  echo "cargo-fuzz is not installed: skipping fuzzing (cargo install cargo-fuzz)"
  exit 0
fi
export RUSTC_BOOTSTRAP=1
targets="${FUZZ_TARGETS:-block_decode sst_open_scan wal_replay manifest_replay ops_model}"
limit=(-max_total_time="$secs")
[ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
cargo fuzz build -O >/dev/null 2>build.log || { cat build.log; exit 1; }
status=0
printf '%-18s %12s %8s %8s %8s\n' target executions corpus crashes seconds
for t in $targets; do
  mkdir -p "corpus/$t" "artifacts/$t"
  seeds=()
  [ -d "seeds/$t" ] && seeds=("seeds/$t")   # small pristine files (tests/corruption/fuzz_seeds.rs)
  log="$(mktemp)"
  start=$(date +%s)
  cargo fuzz run -O "$t" "corpus/$t" "${seeds[@]}" -- "${limit[@]}" -rss_limit_mb=2048 \
    -timeout=10 -print_final_stats=1 >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  corpus=$(find "corpus/$t" -type f | wc -l)
  crashes=$(find "artifacts/$t" -type f | wc -l)
  printf '%-18s %12s %8s %8s %8s\n' "$t" "${execs:-?}" "$corpus" "$crashes" "$(( $(date +%s) - start ))"
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    status=1
    grep -E 'panicked|ERROR|SUMMARY|Test unit written' "$log" | head -5
  fi
  rm -f "$log"
done
exit $status
