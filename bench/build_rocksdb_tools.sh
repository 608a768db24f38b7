#!/usr/bin/env bash
# Builds RocksDB's own release tools (db_bench, cache_bench, ldb, sst_dump) from the source tree that
# the `librocksdb-sys` crate ships (the same RocksDB version the `rocksdb` crate links: 10.4.2), so
# that Talus can be measured against RocksDB's own db_bench, not only against our adapter.
#
# CMake Release, PORTABLE=0 (-march=native, as `make release` on this machine), static library,
# gflags, lz4, zstd, snappy. Never run in CI: about 20-30 minutes on a 2-core machine.
#
# usage: bench/build_rocksdb_tools.sh [OUT_DIR]      (default: /work/rocksdb-tools)
# The binaries land in OUT_DIR/bin; the build tree in OUT_DIR/build (reused by later runs).
# PORTABLE=haswell (RocksDB's own CMake setting: a -march value) builds for a named CPU instead,
# e.g. for valgrind, which cannot decode the AVX-512 of a native build on these machines;
# bench/build_rocksdb_adapter.sh then builds the adapter for the same CPU. Not x86-64-v3: that
# level lacks PCLMUL, and util/crc32c.cc does not compile without it.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/work/rocksdb-tools}
JOBS=${JOBS:-$(nproc)}
PORTABLE=${PORTABLE:-0}

need=()
for p in cmake libgflags-dev liblz4-dev libzstd-dev libsnappy-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi

# The source tree: the librocksdb-sys version in Cargo.lock, fetched by cargo into its registry.
ver=$(awk '/^name = "librocksdb-sys"/{getline; gsub(/"/,"",$3); print $3}' Cargo.lock)
[ -n "$ver" ] || { echo "librocksdb-sys is not in Cargo.lock" >&2; exit 1; }
src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"librocksdb-sys-$ver"/rocksdb 2>/dev/null | head -n1 || true)
if [ -z "$src" ]; then
  cargo fetch -q
  src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"librocksdb-sys-$ver"/rocksdb | head -n1)
fi
echo "RocksDB source: $src (librocksdb-sys $ver)"

mkdir -p "$OUT/build" "$OUT/bin"
cmake -S "$src" -B "$OUT/build" -DCMAKE_BUILD_TYPE=Release -DPORTABLE="$PORTABLE" \
  -DROCKSDB_BUILD_SHARED=OFF -DFAIL_ON_WARNINGS=OFF -DWITH_TESTS=OFF -DWITH_ALL_TESTS=OFF \
  -DWITH_BENCHMARK_TOOLS=ON -DWITH_CORE_TOOLS=ON -DWITH_TOOLS=OFF -DWITH_TRACE_TOOLS=OFF \
  -DWITH_GFLAGS=ON -DWITH_LZ4=ON -DWITH_ZSTD=ON -DWITH_SNAPPY=ON -DWITH_LIBURING=OFF \
  -DWITH_JEMALLOC=OFF -DUSE_RTTI=1 >"$OUT/cmake.log"
cmake --build "$OUT/build" -j "$JOBS" --target db_bench cache_bench ldb sst_dump
for t in db_bench cache_bench ldb sst_dump; do
  f=$(find "$OUT/build" -maxdepth 2 -type f -name "$t" -perm -u+x | head -n1)
  cp "$f" "$OUT/bin/$t"
done
"$OUT/bin/db_bench" --version 2>&1 | head -n1 || true
echo "built: $OUT/bin/{db_bench,cache_bench,ldb,sst_dump}"
