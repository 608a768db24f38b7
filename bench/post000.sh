#!/usr/bin/env bash
# Reference post 000 complete (issue 37 item 4): its configurations (bench/ibench_configs/
# post000.txt: base, c1..c8) in its three setups, one report per setup.
#
# usage: bench/post000.sh OUT [ibench flags common to every run...]
#   Setups (post 000's names), each OUT/<setup>/ as bench/ibench_configs.sh writes it:
#     cached-by-db  the block cache holds the database (CACHE_BIG, default 2 GiB)
#     cached-by-os  a small block cache (CACHE_SMALL, default 64 MiB), buffered IO: the OS's
#                   page cache holds the database
#     io-bound      direct reads and writes, the small block cache: every miss goes to the
#                   device (post 003's regime; add --io_limit_* flags for a capped device)
#   The common flags set the scale, e.g. --num=20000000 --num_i1=5000000 --clients=8.
#   Post 000 gave c1, c6 and c7 (the hyper clock cache) 3/4 of the others' cache to avoid OOM;
#   set C1_CACHE_SHARE=75 to do the same (default 100: equal caches).
set -euo pipefail
if [ $# -lt 1 ]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
OUT=$(realpath -m "$1")
shift
cd "$(dirname "$0")/.."
big=${CACHE_BIG:-2147483648}
small=${CACHE_SMALL:-67108864}
share=${C1_CACHE_SHARE:-100}
mkdir -p "$OUT"
configs="$OUT/post000-configs.txt"
# The hyper-clock configurations' cache share, as post 000 ran them, goes into their lines.
while read -r name flags; do
  case "$name" in ''|'#'*) continue ;; esac
  case "$name" in
    c1_*|c6_*|c7_*) echo "$name $flags --cache_share_percent=$share" ;;
    *) echo "$name $flags" ;;
  esac
done < bench/ibench_configs/post000.txt > "$configs"
if [ "$share" = 100 ]; then
  sed -i 's/ --cache_share_percent=100$//' "$configs"
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # SETUP CACHE FLAGS...
  local setup=$1 cache=$2; shift 2
  echo "=== setup $setup (cache $cache bytes)"
  if [ "$share" != 100 ]; then
    # ibench has no cache-share flag: give the hyper-clock lines their own --cache_size.
    sed "s/ --cache_share_percent=$share\$/ --cache_size=$((cache * share / 100))/" "$configs" \
      > "$OUT/$setup-configs.txt"
  else
    cp "$configs" "$OUT/$setup-configs.txt"
  fi
  bench/ibench_configs.sh "$OUT/$setup-configs.txt" "$OUT/$setup" --cache_size="$cache" "$@"
}
run cached-by-db "$big" "$@"
run cached-by-os "$small" "$@"
run io-bound "$small" --use_direct_reads=1 --use_direct_io_for_flush_and_compaction=1 "$@"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
