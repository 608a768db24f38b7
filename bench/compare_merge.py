#!/usr/bin/env python3
"""Merge benchmarks against RocksDB's own db_bench (issue 40): `mergerandom` then
`readrandommergerandom` on a fresh database, one process per run, the two engines interleaved
(ABBA) for --rounds rounds; prints each run's ops/sec and the medians with Talus/RocksDB ratios.

usage: bench/compare_merge.py --binary target/lto/release-lto/talus
           [--rocksdb_db_bench /work/rocksdb-tools/bin/db_bench] [--num 1000000]
           [--merge_keys -1] [--value_size 8] [--merge_operator uint64add] [--rounds 2]
           [--dir /tmp/compare_merge]

Both engines get the same explicit flags (printed), a fixed --seed (so both draw the same keys:
the `hits` of readrandommergerandom must be equal, or the run fails) and their own defaults for
everything else, as compare.py's "explicit" suite spells out: lz4, a 1 GiB LRU cache, 10 bloom
bits, 64 MiB memtables, dynamic level bytes, 2 background jobs. Load average is printed before
and after: on a shared machine the numbers are noisy, which the interleaving only partly
corrects.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys

LINE = re.compile(r"^(\w+)\s+:\s+([0-9.]+) micros/op (\d+) ops/sec")
HITS = re.compile(r"hits:(\d+)")
BENCHES = ["mergerandom", "readrandommergerandom"]


def flags(a):
    return [
        f"--num={a.num}", f"--merge_keys={a.merge_keys}", f"--value_size={a.value_size}",
        "--key_size=16", f"--merge_operator={a.merge_operator}", "--seed=1",
        "--compression_type=lz4", "--cache_size=1073741824", "--cache_numshardbits=6",
        "--bloom_bits=10", "--block_size=4096", "--write_buffer_size=67108864",
        "--max_write_buffer_number=2", "--level0_file_num_compaction_trigger=4",
        "--max_bytes_for_level_base=268435456", "--target_file_size_base=67108864",
        "--level_compaction_dynamic_level_bytes=true", "--max_background_jobs=2",
        "--threads=1", "--sync=false", "--disable_wal=false", "--histogram=1",
        f"--benchmarks={','.join(BENCHES)}",
    ]


def run(binary, engine_args, common, db):
    shutil.rmtree(db, ignore_errors=True)
    p = subprocess.run([*binary, *engine_args, *common, f"--db={db}"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        sys.exit(f"{binary} failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    out, hits = {}, None
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if m and m.group(1) in BENCHES:
            out[m.group(1)] = int(m.group(3))
            h = HITS.search(line)
            if h:
                hits = int(h.group(1))
    shutil.rmtree(db, ignore_errors=True)
    return out, hits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--rocksdb_db_bench", default="/work/rocksdb-tools/bin/db_bench")
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--merge_keys", type=int, default=-1)
    ap.add_argument("--value_size", type=int, default=8)
    ap.add_argument("--merge_operator", default="uint64add")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--dir", default="/tmp/compare_merge")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    common = flags(a)
    engines = {
        "talus": ([a.binary, "db_bench"], ["--wal_mmap_writes=true"]),
        "rocksdb": ([a.rocksdb_db_bench], []),
    }
    print("flags:", " ".join(common))
    print("load before:", open("/proc/loadavg").read().split()[:3])
    results = {e: {b: [] for b in BENCHES} for e in engines}
    for r in range(a.rounds):
        order = ["talus", "rocksdb", "rocksdb", "talus"] if r % 2 == 0 else \
            ["rocksdb", "talus", "talus", "rocksdb"]
        for e in order:
            binary, extra = engines[e]
            out, hits = run(binary, extra, common, os.path.join(a.dir, e))
            print(f"round {r} {e}: " + " ".join(f"{b}={out.get(b)}" for b in BENCHES) +
                  f" hits={hits}", flush=True)
            results[e]["hits"] = results[e].get("hits", hits)
            if results[e]["hits"] != hits:
                sys.exit(f"{e}: hits changed between runs ({results[e]['hits']} vs {hits})")
            for b in BENCHES:
                results[e][b].append(out[b])
    if results["talus"]["hits"] != results["rocksdb"]["hits"]:
        sys.exit(f"hits differ: talus {results['talus']['hits']}, "
                 f"rocksdb {results['rocksdb']['hits']}")
    print("load after:", open("/proc/loadavg").read().split()[:3])
    print(f"{'benchmark':<24}{'talus ops/s':>14}{'rocksdb ops/s':>16}{'ratio':>8}")
    for b in BENCHES:
        t = statistics.median(results["talus"][b])
        k = statistics.median(results["rocksdb"][b])
        print(f"{b:<24}{t:>14.0f}{k:>16.0f}{t / k:>8.2f}")


if __name__ == "__main__":
    main()
