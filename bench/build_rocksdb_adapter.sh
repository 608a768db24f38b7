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
# usage: bench/build_rocksdb_adapter.sh [TARGET_DIR] [ROCKSDB_TOOLS_DIR]
#        (defaults: /work/target-rdb, /work/rocksdb-tools); the binary: TARGET_DIR/release/talus
# About 15 minutes on a 2-core machine (RocksDB's C++); never in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:-/work/target-rdb}
TOOLS=${2:-/work/rocksdb-tools}

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
# Rust's code for the same CPU level as RocksDB's (-march=native, or PORTABLE's level).
cpu=$(echo "$cg" | tr ' ' '\n' | sed -n 's/^-march=//p' | head -n1)
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
