#!/usr/bin/env bash
# Issue 36's comparison against RocksDB's own release db_bench under RocksDB's default options
# (bench/compare.py --suite=defaults: only lz4, a 1 GiB cache, 10 bloom bits, dynamic level bytes
# and 2 background jobs set), at six value sizes, Talus in the user's build (release-lto, generic
# x86-64) and in a native one, interleaved ABBA, then one table of ratios over all of it.
#
# usage: bench/compare_defaults.sh OUT_DIR [ROUNDS]        (default 5 rounds)
#   env ROCKSDB_DB_BENCH (default /work/rocksdb-tools/bin/db_bench, bench/build_rocksdb_tools.sh)
#   env SIZES: "key:value:num ..." to run a subset (default: the six below)
# Time it only on a quiet machine: the load average is printed before and after each size.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: bench/compare_defaults.sh OUT_DIR [ROUNDS]}"
rounds="${2:-5}"
rocks="${ROCKSDB_DB_BENCH:-/work/rocksdb-tools/bin/db_bench}"
sizes="${SIZES:-24:64:1000000 16:100:1000000 16:400:1000000 16:1024:390000 16:2048:200000 16:4096:100000}"
mkdir -p "$out"
cargo build -q --profile release-lto -p talus-cli
RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR=target/native \
  cargo build -q --profile release-lto -p talus-cli
for s in $sizes; do
  IFS=: read -r k v n <<<"$s"
  echo "== key $k value $v num $n (load $(cut -d' ' -f1-3 /proc/loadavg))"
  python3 bench/compare.py --suite=defaults --engines=talus,talus_native,rocksdb_bench \
    --binary=target/release-lto/talus --binary_native=target/native/release-lto/talus \
    --rocksdb_db_bench="$rocks" --key_size="$k" --value_size="$v" --num="$n" \
    --rounds="$rounds" --tsv="$out/k${k}_v${v}.tsv" | tee "$out/k${k}_v${v}.txt"
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
# Every line's median ratio (throughput; Talus / RocksDB) and the geometric mean of all.
python3 - "$out" <<'EOF'
import csv, glob, math, os, sys
rows = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "k*_v*.tsv"))):
    med = {}
    with open(f) as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            med[(r["engine"], r["benchmark"])] = float(r["ops_sec"]) if r["ops_sec"] else None
    size = os.path.basename(f)[:-4]
    for (e, b), v in med.items():
        if e == "rocksdb_bench" or v is None:
            continue
        base = med.get(("rocksdb_bench", b))
        if base:
            rows.append((e, size, b, v / base))
for e in ("talus", "talus_native"):
    rs = [r for r in rows if r[0] == e]
    if not rs:
        continue
    print(f"{e} / rocksdb_bench, {len(rs)} lines:")
    for _, size, b, r in sorted(rs, key=lambda x: x[3]):
        print(f"  {size:<12} {b:<20} {r:.3f}")
    g = math.exp(sum(math.log(r[3]) for r in rs) / len(rs))
    print(f"  geomean {g:.3f}, lowest line {min(r[3] for r in rs):.3f}")
EOF
