#!/usr/bin/env bash
# Builds RocksDB 10.4.2's db_bench with randomtransaction working, from an existing CMake build
# tree of its tools (ROCKSDB_BUILD, default /work/rocksdb-tools/build) and its source: only
# test_util/transaction_test_util.cc is recompiled (same flags), and db_bench is relinked from
# the tree's objects and librocksdb.a. Two one-line fixes of release-build bugs:
#   - `assert(txn_->SetName(name).ok())` compiles to nothing under NDEBUG, so transactions are
#     never named and every Prepare fails; the call is made outside the assert;
#   - a debug log line dereferences `txn->GetSnapshot()`, null for optimistic transactions
#     (segfault); it logs 0 instead.
# Makes OUT/db_bench-fixed, and OUT/db_bench-noprepare (the same, but never preparing: Talus has
# no two-phase commit; the random draws are unchanged).
set -euo pipefail
build=${ROCKSDB_BUILD:-/work/rocksdb-tools/build}
out=${1:-/tmp/rdb-patched}
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
mkdir -p "$out"
f=$src/test_util/transaction_test_util.cc
sed -e 's/  assert(txn_->SetName(name).ok());/  { Status name_s = txn_->SetName(name); assert(name_s.ok()); (void)name_s; }/' \
    -e 's/txn->GetSnapshot()->GetSequenceNumber(), full_key.c_str(),/txn->GetSnapshot() ? txn->GetSnapshot()->GetSequenceNumber() : 0, full_key.c_str(),/' \
    "$f" > "$out/fixed.cc"
sed -e 's/      bool with_prepare = !is_optimistic \&\& !rand_->OneIn(10);/      bool with_prepare = !is_optimistic \&\& !rand_->OneIn(10);\n      if (with_prepare) { rand_->OneIn(20); }\n      with_prepare = false;/' \
    "$out/fixed.cc" > "$out/noprepare.cc"
eval "$(sed -n 's/^\(CXX_[A-Z]*\) = \(.*\)/\1="\2"/p' "$build/CMakeFiles/rocksdb.dir/flags.make")"
link=$(cat "$build/CMakeFiles/db_bench.dir/link.txt")
for v in fixed noprepare; do
  # Compiled as the original file (its __FILE__ feeds RocksDB's log-name arithmetic).
  { echo "#line 1 \"$f\""; cat "$out/$v.cc"; } > "$out/$v-line.cc"
  # shellcheck disable=SC2086
  c++ $CXX_DEFINES $CXX_INCLUDES $CXX_FLAGS -c "$out/$v-line.cc" -o "$out/$v.o" 2>/dev/null
  (cd "$build" && eval "${link/ -o db_bench / $out/$v.o -o $out/db_bench-$v }")
done
ls -l "$out"/db_bench-*
