#!/usr/bin/env bash
# The long data-safety campaign (issue 34), outside CI: kill -9 crash tests, blackbox and
# whitebox (kill points), on leveled and universal compaction, the table workload and direct IO;
# simulated power loss through the fault-injecting Fs; the corruption campaign; the fuzz targets.
#
# usage: bench/crash_campaign.sh HOURS [OUT_DIR]
#   HOURS   wall-clock budget, split: 55% the eight kill -9 campaigns (equal shares), 30% the
#           fuzz targets (equal shares; skipped without cargo-fuzz), the rest power loss and
#           corruption (sized by counts, not time: POWER_LOSS_SEQUENCES, default 100000;
#           CORRUPTION_CASES per damaged file type, default 7000: about 100,000 injections).
#   OUT_DIR logs and databases (default: a new directory under /tmp); kept for inspection.
#
# Prints one summary line per campaign:
#   campaign NAME: cycles C, operations O, acknowledged writes lost L, wrong values W, panics P, ok|FAILED
# and exits non-zero if any campaign failed. Builds talus-cli twice: plain (blackbox) and with
# --features kill-points (whitebox), each in its own target directory so neither rebuilds the
# other.
set -uo pipefail
cd "$(dirname "$0")/.."
hours="${1:?usage: bench/crash_campaign.sh HOURS [OUT_DIR]}"
out="${2:-$(mktemp -d /tmp/talus-campaign-XXXXXX)}"
mkdir -p "$out"
total=$(python3 -c "print(int(float('$hours') * 3600))")
kill_secs=$(( total * 55 / 100 / 8 ))
fuzz_secs=$(( total * 30 / 100 / 5 ))
pl_seq="${POWER_LOSS_SEQUENCES:-100000}"
corr_cases="${CORRUPTION_CASES:-7000}"
echo "campaign: ${hours} h into $out (kill campaigns ${kill_secs}s each, fuzz ${fuzz_secs}s per target)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

cargo build --release -q -p talus-cli || exit 1
CARGO_TARGET_DIR=target/kill-points cargo build --release -q -p talus-cli --features kill-points || exit 1
plain=target/release/talus
whitebox=target/kill-points/release/talus
status=0

summary() { # NAME LOG: the crash driver's totals line as the campaign's summary
  local name=$1 log=$2 line
  line=$(grep '^crash test totals:' "$log" | tail -1)
  if [ -z "$line" ]; then
    echo "campaign $name: no totals line (see $log), FAILED"; status=1; return
  fi
  local f; f() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<" ${line#*:}"; }
  local verdict=ok
  if [ "$(f lost_acked)" != 0 ] || [ "$(f wrong)" != 0 ] || [ "$(f panics)" != 0 ] \
    || [ "$(f failures)" != 0 ]; then verdict=FAILED; status=1; fi
  echo "campaign $name: cycles $(f cycles), operations $(f operations), acknowledged writes lost" \
    "$(f lost_acked), wrong values $(f wrong), panics $(f panics), $verdict"
  grep '^kill points:' "$log" | tail -1 | sed "s/^/  $name /"
}

crash() { # NAME BINARY ARGS...: one kill -9 campaign of kill_secs seconds
  local name=$1 bin=$2; shift 2
  local log="$out/$name.log"
  "$bin" stress --crash --duration="$kill_secs" --db="$out/$name/db" "$@" >"$log" 2>&1
  summary "$name" "$log"
}

seed=$(date +%s)
for mode in blackbox whitebox; do
  bin=$plain; extra=(--kill_min_ms=1000 --kill_max_ms=8000)
  if [ "$mode" = whitebox ]; then
    bin=$whitebox; extra=(--kill_points=all --kill_min_ms=1000 --kill_max_ms=4000)
  fi
  crash "$mode-leveled" "$bin" "${extra[@]}" --seed=$((seed + 1))
  crash "$mode-universal" "$bin" "${extra[@]}" --compaction_style=universal --seed=$((seed + 2))
  crash "$mode-table" "$bin" "${extra[@]}" --workload=table --max_key=20000 --seed=$((seed + 3))
  crash "$mode-direct-io" "$bin" "${extra[@]}" --direct_io=1 --seed=$((seed + 4))
done

# Simulated power loss: SimFs histories, each ended by a power loss (power_loss_campaign.rs).
log="$out/power-loss.log"
POWER_LOSS_SEQUENCES=$pl_seq POWER_LOSS_SEED=$seed cargo test --release -q -p talus \
  --test power_loss_campaign -- --nocapture >"$log" 2>&1
rc=$?
line=$(grep '^power-loss campaign:' "$log" | tail -1)
echo "campaign power-loss: ${line#power-loss campaign: }, $([ $rc -eq 0 ] && echo ok || echo FAILED)"
[ $rc -eq 0 ] || status=1

# Corruption: every kind of damage to every file of a fixture database (corruption/campaign.rs).
log="$out/corruption.log"
CORRUPTION_CASES=$corr_cases cargo test --release -q -p talus --test corruption \
  corruption_campaign -- --nocapture >"$log" 2>&1
rc=$?
line=$(grep '^corruption totals:' "$log" | tail -1)
echo "campaign corruption: ${line#corruption totals: }, $([ $rc -eq 0 ] && echo ok || echo FAILED)"
grep '^corruption campaign:' "$log" | tail -1 | sed 's/^/  /'
[ $rc -eq 0 ] || status=1

# Fuzz targets: executions, corpus and crashes per target (fuzz/run.sh).
if command -v cargo-fuzz >/dev/null; then
  log="$out/fuzz.log"
  fuzz/run.sh "$fuzz_secs" >"$log" 2>&1
  rc=$?
  sed 's/^/  fuzz /' "$log" | grep -v '^  fuzz $'
  echo "campaign fuzz: $(grep -c . "$log") lines, $([ $rc -eq 0 ] && echo ok || echo FAILED)"
  [ $rc -eq 0 ] || status=1
else
  echo "campaign fuzz: skipped (cargo install cargo-fuzz)"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
