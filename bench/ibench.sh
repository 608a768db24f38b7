#!/usr/bin/env bash
# The insert-benchmark comparison behind issue 7's note: Talus and SQLite, same flags, one after
# the other, then one HTML report and a headless-Chromium screenshot of it.
# usage: bench/ibench.sh [OUT_DIR]   (default /tmp/ibench; takes ~12 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/ibench}
cargo build --release -q -p talus-cli
T=target/release/talus
COMMON="--num=2000000 --num_i1=500000 --seconds=120 --steps=l.i0,l.x,l.i1,q100,q500 --cache_size=8388608"
rm -rf "$OUT/db" "$OUT/talus" "$OUT/sqlite"
mkdir -p "$OUT"
for e in talus sqlite; do
  EXTRA=""
  [ "$e" = talus ] && EXTRA="--write_buffer_size=8388608"
  # shellcheck disable=SC2086
  /usr/bin/time -v $T ibench --engine=$e --db="$OUT/db/$e" $COMMON $EXTRA --results="$OUT/$e" \
    > "$OUT/$e.stdout" 2> "$OUT/$e.stderr"
  grep '^summary' "$OUT/$e.stdout"
done
$T report --results="$OUT" --out="$OUT/report.html"
if command -v chromium >/dev/null; then
  chromium --headless --disable-gpu --no-sandbox --window-size=1200,3000 \
    --screenshot="$OUT/report.png" "file://$OUT/report.html" 2>/dev/null
fi
echo "report: $OUT/report.html"
