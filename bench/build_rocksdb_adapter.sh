#!/usr/bin/env bash
# Builds `talus` with the `rocksdb` feature (db_bench `--engine=rocksdb`, the harness's adapter)
# so that the RocksDB inside it is compiled as bench/build_rocksdb_tools.sh compiles RocksDB's own
# db_bench: the calibration of issue 12 compares the two, and they must run the same RocksDB.
#
# The `librocksdb-sys` crate compiles RocksDB with the `cc` crate and defines none of the platform
# macros RocksDB's CMake detects. Without them RocksDB 10.4.2 is a different program on Linux:
# no ROCKSDB_FALLOCATE_PRESENT (no preallocation of WALs and SSTs, and `allow_mmap_writes` falls
# back to write(2)), no ROCKSDB_RANGESYNC_PRESENT (no sync_file_range), no
# ROCKSDB_PTHREAD_ADAPTIVE_MUTEX (plain mutexes), and only the -m flags the crate derives from
# Rust's target features (CMake PORTABLE=0: -march=native). `cc` appends $CXXFLAGS, so they are
# passed there: the defines and flags of the CMake tree when it exists (OUT/build of
# build_rocksdb_tools.sh), else the list CMake produced on Debian 12 x86_64.
#
# usage: bench/build_rocksdb_adapter.sh [TARGET_DIR] [ROCKSDB_TOOLS_DIR] [-- CARGO ARGS...]
#        (defaults: /work/target-rdb, /work/rocksdb-tools); the binary: TARGET_DIR/release/talus
#        With `-- CARGO ARGS`, runs `cargo CARGO ARGS` with the same flags and target dir instead
#        (so RocksDB is not compiled again), e.g. the table tests on RocksDB:
#        bench/build_rocksdb_adapter.sh target/rdb /work/rocksdb-tools -- \
#          test --release -p talus-table --features rocksdb
#        With LINK_TOOLS_LIB=1, RocksDB is not compiled at all: the librocksdb.a that
#        bench/build_rocksdb_tools.sh built with CMake (ROCKSDB_TOOLS_DIR/build, from the same
#        librocksdb-sys source tree, checked below) is linked, with the system's snappy (the
#        CMake build compiled against its headers; the crate's bundled snappy has another ABI).
#        Then the RocksDB in `talus` is exactly the one in RocksDB's own db_bench (3 minutes).
# About 15 minutes on a 2-core machine (RocksDB's C++); never in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:-/work/target-rdb}
TOOLS=${2:-/work/rocksdb-tools}
CARGO_ARGS=()
if [ $# -gt 2 ] && [ "$3" = "--" ]; then
  CARGO_ARGS=("${@:4}")
fi

dpkg -s libclang-dev >/dev/null 2>&1 || {
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libclang-dev
}

flags_make="$TOOLS/build/CMakeFiles/rocksdb.dir/flags.make"
if [ -f "$flags_make" ]; then
  # The ROCKSDB_* platform defines and the code-generation flags of RocksDB's own build (not its
  # warnings, its -O level, which cargo's release profile sets, nor the library choices, which
  # the crate's features make).
  defs=$(sed -n 's/^CXX_DEFINES = //p' "$flags_make" | tr ' ' '\n' | grep -E '^-DROCKSDB_(AUXV|FALLOCATE|MALLOC|PTHREAD|RANGESYNC|SCHED)' | tr '\n' ' ')
  cg=$(sed -n 's/^CXX_FLAGS = //p' "$flags_make" | tr ' ' '\n' | grep -E '^-(march=|fno-builtin-memcmp|fno-omit-frame-pointer|momit-leaf-frame-pointer)' | tr '\n' ' ')
  echo "flags from $flags_make"
else
  defs="-DROCKSDB_AUXV_GETAUXVAL_PRESENT -DROCKSDB_FALLOCATE_PRESENT -DROCKSDB_MALLOC_USABLE_SIZE -DROCKSDB_PTHREAD_ADAPTIVE_MUTEX -DROCKSDB_RANGESYNC_PRESENT -DROCKSDB_SCHED_GETCPU_PRESENT"
  cg="-march=native -fno-builtin-memcmp -fno-omit-frame-pointer -momit-leaf-frame-pointer"
  echo "no CMake tree at $TOOLS/build: the flags CMake produced on Debian 12 x86_64"
fi
# `cc` compiles with -fPIC; RocksDB's CMake build with GCC's default (Debian: -fPIE). Under -fPIC
# every function with default visibility may be interposed, so GCC does not inline them into their
# callers in the same file: LRUCacheShard::Lookup calls LRUHandleTable::Lookup and LRU_Remove
# instead of inlining them (objdump of cache/lru_cache.cc, and the readrandom profile). -fPIE, given
# last, wins and is what the executable needs.
export CXXFLAGS="$cg $defs -fPIE"
echo "CXXFLAGS=$CXXFLAGS"
if [ "${LINK_TOOLS_LIB:-0}" = 1 ]; then
  lib="$TOOLS/build/librocksdb.a"
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$TOOLS/build/CMakeCache.txt" 2>/dev/null || true)
  case "$src" in
    */librocksdb-sys-0.17.3+10.4.2/rocksdb) ;;
    *) echo "LINK_TOOLS_LIB=1: $lib is not built from librocksdb-sys 0.17.3's RocksDB 10.4.2 (source: ${src:-unknown})" >&2; exit 1 ;;
  esac
  [ -f "$lib" ] || { echo "LINK_TOOLS_LIB=1: no $lib (run bench/build_rocksdb_tools.sh)" >&2; exit 1; }
  [ -f /usr/lib/x86_64-linux-gnu/libsnappy.a ] || { echo "LINK_TOOLS_LIB=1: needs libsnappy-dev" >&2; exit 1; }
  export ROCKSDB_LIB_DIR="$TOOLS/build" ROCKSDB_STATIC=1
  export SNAPPY_LIB_DIR=/usr/lib/x86_64-linux-gnu SNAPPY_STATIC=1
  echo "linking $lib (RocksDB's CMake build) and the system's snappy"
fi
# Rust's code for the same CPU level as RocksDB's (-march=native, or PORTABLE's level).
cpu=$(echo "$cg" | tr ' ' '\n' | sed -n 's/^-march=//p' | head -n1)
if [ ${#CARGO_ARGS[@]} -gt 0 ]; then
  CARGO_TARGET_DIR="$TARGET" RUSTFLAGS="-C target-cpu=${cpu:-native}" exec cargo "${CARGO_ARGS[@]}"
fi
CARGO_TARGET_DIR="$TARGET" RUSTFLAGS="-C target-cpu=${cpu:-native}" \
  cargo build --release -p talus-cli --features rocksdb
bin="$TARGET/release/talus"
# A RocksDB built with ROCKSDB_FALLOCATE_PRESENT carries this message. (grep reads all of
# strings' output: `grep -q` would quit at the first match and fail the pipe under pipefail.)
if strings "$bin" | grep "Error allocating space to file" >/dev/null; then
  echo "built: $bin (RocksDB with the CMake platform defines)"
else
  echo "warning: $bin: RocksDB seems built without ROCKSDB_FALLOCATE_PRESENT" >&2
  exit 1
fi
