#!/usr/bin/env python3
"""db_bench readrandom through each block cache kind, Talus vs RocksDB's db_bench (issue 18:
"the clock cache no slower than the LRU, and >= 1.2x RocksDB's db_bench on the same flags").

usage: bench/cache_readrandom.py --binary TALUS --rocksdb_db_bench PATH --dir DIR
                                 [--num N] [--value_size V] [--reads R] [--rounds K]
                                 [--caches 67108864,1073741824] [--threads 1,2]
                                 [--cache_types lru_cache,hyper_clock_cache]

Reads the databases bench/cache_rss.py leaves in DIR (`DIR/talus`, `DIR/rocksdb_bench`; make them
with `bench/cache_rss.py ... --dir DIR --keep`, same --num/--value_size/--seed): per cell
(cache size, threads, cache type) both engines run `readrandom --use_existing_db=1` with the
same flags (bench/compare.py's COMMON list, `--cache_numshardbits=-1`, no compression), in
ABBA order over `--rounds` rounds, each run after bench/compare.py's `warm` of its database
(written back, dropped from the page cache, read once: both databases cached in the same
shape). Prints the best ops/sec of each engine per cell, the clock/LRU ratio of each engine and
the Talus/RocksDB ratio.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cache_rss import common, run  # noqa: E402
from compare import LINE, warm  # noqa: E402


def readrandom(a, engine, cache, threads, cache_type):
    db = os.path.join(a.dir, engine)
    args = [f"--num={a.num}", f"--db={db}", f"--seed={a.seed}", f"--threads={threads}",
            f"--reads={a.reads}", "--benchmarks=readrandom", "--use_existing_db=1"]
    warm(db)
    out = run(a, engine, args + common(a, cache, cache_type))
    for line in out.splitlines():
        m = LINE.match(line)
        if m and m.group(1) == "readrandom":
            return int(m.group(3))
    sys.exit(f"{engine}: no readrandom line:\n{out[-3000:]}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--rocksdb_db_bench", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--num", type=int, default=4_000_000)
    p.add_argument("--value_size", type=int, default=400)
    p.add_argument("--reads", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--pause", type=float, default=1.0)
    p.add_argument("--caches", default="67108864,1073741824")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--cache_types", default="lru_cache,hyper_clock_cache")
    a = p.parse_args()
    engines = ["talus", "rocksdb_bench"]
    for e in engines:
        if not os.path.exists(os.path.join(a.dir, e, "CURRENT")):
            sys.exit(f"no database in {os.path.join(a.dir, e)}: make it with bench/cache_rss.py "
                     f"--dir {a.dir} --keep")
    best = {}
    flip = False
    for r in range(a.rounds):
        for cache in [int(c) for c in a.caches.split(",")]:
            for t in [int(x) for x in a.threads.split(",")]:
                for ct in a.cache_types.split(","):
                    order = engines[::-1] if flip else engines
                    flip = not flip
                    for e in order:
                        ops = readrandom(a, e, cache, t, ct)
                        k = (cache, t, ct, e)
                        best[k] = max(best.get(k, 0), ops)
                        print(f"round {r + 1} cache {cache >> 20} MiB threads {t} {ct:18} "
                              f"{e:14} {ops} ops/sec", flush=True)
    print()
    print(f"readrandom, {a.num} keys, value {a.value_size} B, {a.reads} reads per thread, best of "
          f"{a.rounds}")
    print("| cache MiB | threads | cache_type | Talus ops/s | RocksDB ops/s | Talus/RocksDB |")
    print("|---|---|---|---|---|---|")
    for cache in [int(c) for c in a.caches.split(",")]:
        for t in [int(x) for x in a.threads.split(",")]:
            for ct in a.cache_types.split(","):
                tv, rv = best[(cache, t, ct, "talus")], best[(cache, t, ct, "rocksdb_bench")]
                print(f"| {cache >> 20} | {t} | {ct} | {tv} | {rv} | {tv / rv:.2f} |")
    print()
    print("clock / LRU within each engine:")
    types = a.cache_types.split(",")
    if "lru_cache" in types:
        for ct in [x for x in types if x != "lru_cache"]:
            for cache in [int(c) for c in a.caches.split(",")]:
                for t in [int(x) for x in a.threads.split(",")]:
                    cells = ", ".join(
                        f"{e} {best[(cache, t, ct, e)] / best[(cache, t, 'lru_cache', e)]:.2f}"
                        for e in engines)
                    print(f"  {ct} {cache >> 20} MiB, {t} threads: {cells}")


if __name__ == "__main__":
    main()
