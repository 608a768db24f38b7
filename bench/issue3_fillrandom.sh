#!/usr/bin/env bash
# Issue 3 measurements: fillrandom 5M (16/100 bytes), Talus db_bench vs Debian RocksDB db_bench, same flags.
set -u
mkdir -p "${OUT:-/tmp/issue3}"
N=5000000
COMMON="--benchmarks=fillrandom,stats --num=$N --key_size=16 --value_size=100 --compression_type=lz4 --level_compaction_dynamic_level_bytes=true --seed=1"
run() { # name engine extra...
  local name=$1 eng=$2; shift 2
  rm -rf ${OUT:-/tmp/issue3}/db
  if [ "$eng" = talus ]; then
    ${TALUS:-target/release/talus} db_bench $COMMON --db=${OUT:-/tmp/issue3}/db "$@" > ${OUT:-/tmp/issue3}/$name.$eng.txt 2>&1
  else
    db_bench $COMMON --db=${OUT:-/tmp/issue3}/db "$@" > ${OUT:-/tmp/issue3}/$name.$eng.txt 2>&1
  fi
  echo "$name $eng done $(grep -E '^fillrandom' ${OUT:-/tmp/issue3}/$name.$eng.txt)"
}
run base talus; run base rocksdb
run sub4 talus --subcompactions=4; run sub4 rocksdb --subcompactions=4
run intral0off talus --intra_l0_compaction=false
run universal talus --compaction_style=1; run universal rocksdb --compaction_style=1
run lowtrig talus --level0_slowdown_writes_trigger=8 --level0_stop_writes_trigger=12
run lowtrig rocksdb --level0_slowdown_writes_trigger=8 --level0_stop_writes_trigger=12
