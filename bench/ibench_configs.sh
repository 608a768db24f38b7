#!/usr/bin/env bash
# The configuration sweep of issue 14 (reference post 000): the insert benchmark on Talus under
# each named configuration of CONFIGS, one after another, then one report page.
#
# usage: bench/ibench_configs.sh CONFIGS OUT [ibench flags common to every configuration...]
#   CONFIGS  a text file, one configuration a line: a name, then its flags (RocksDB option
#            names: --max_subcompactions=4 --intra_l0_compaction=false ...); `#` starts a
#            comment. Name one `base`: the report shows every number as a ratio to it.
#   OUT      results: OUT/<name>/ (run.json, summary.csv, <step>.intervals.csv,
#            <step>.stats.txt), OUT/<name>.stdout, OUT/report.html (and OUT/report.png when
#            chromium is on PATH). Each configuration's database is OUT/db/<name>, removed after
#            its run.
#   TALUS    the talus binary (default: target/release/talus, built here if missing).
# Runs under `nice`; configurations run one at a time so they do not disturb each other.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
CONFIGS=$(realpath "$1")
OUT=$(realpath -m "$2")
shift 2
T=$(realpath -m "${TALUS:-$(dirname "$0")/../target/release/talus}")
cd "$(dirname "$0")/.."
if [ ! -x "$T" ]; then
  cargo build --release -q -p talus-cli
fi
mkdir -p "$OUT"
cp "$CONFIGS" "$OUT/configs.txt"
while read -r name flags; do
  case "$name" in ''|'#'*) continue ;; esac
  rm -rf "${OUT:?}/$name" "${OUT:?}/db/$name"
  echo "== $name: $flags"
  # shellcheck disable=SC2086
  nice "$T" ibench --engine=talus --db="$OUT/db/$name" --results="$OUT/$name" "$@" $flags \
    > "$OUT/$name.stdout"
  grep '^summary' "$OUT/$name.stdout" || true
  rm -rf "${OUT:?}/db/$name"
done < "$CONFIGS"
rmdir "$OUT/db" 2>/dev/null || true
"$T" report --results="$OUT" --out="$OUT/report.html"
if command -v chromium >/dev/null; then
  chromium --headless --disable-gpu --no-sandbox --hide-scrollbars --window-size=1400,4000 \
    --user-data-dir="$OUT/.chromium" --screenshot="$OUT/report.png" \
    "file://$(realpath "$OUT/report.html")" >/dev/null 2>&1 || true
  rm -rf "$OUT/.chromium"
fi
echo "report: $OUT/report.html"
