#!/usr/bin/env python3
"""Peak RSS over the block cache size, LRU vs hyper clock cache, Talus vs RocksDB's db_bench
(issue 18; post 000 saw mysqld's RSS grow well past the block cache with the clock cache).

usage: bench/cache_rss.py --binary TALUS [--rocksdb_db_bench PATH] [--num N] [--value_size V]
                          [--caches 268435456,1073741824] [--threads T] [--reads R]
                          [--cache_types lru_cache,hyper_clock_cache] [--dir DIR] [--keep] [--reuse]

Per engine: one database (`fillrandom`, no compression, so the data is larger than every cache),
then for each cache size and cache type, interleaved across engines (the engine order flips per
cell), `readrandom --use_existing_db=1` with `--reads` per thread on `--threads` threads, under
`/usr/bin/time` for the peak RSS. The table shows peak RSS, peak RSS minus the cache size
(`r-delta`, post 000's column), the block cache's usage at the end (`block-cache-usage`, so a
cache that did not fill is visible), and ops/sec. Every other flag is bench/compare.py's COMMON
list, passed to both engines. Both db_bench's use the system allocator unless built otherwise
(the header of each run says which).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import COMMON, LINE, TALUS_ONLY, settle  # noqa: E402

USAGE = re.compile(r"rocksdb\.block-cache-usage\s*[:=]?\s*(\d+)|block cache usage\D*(\d+)", re.I)


def db_bench(a, engine):
    if engine == "rocksdb_bench":
        return [a.rocksdb_db_bench]
    return [a.binary, "db_bench", "--engine=talus"]


def common(a, cache_size, cache_type):
    drop = ("--cache_size=", "--cache_type=", "--value_size=", "--compression_type=",
            "--threads=", "--cache_numshardbits=")
    flags = [f for f in COMMON if not f.startswith(drop)]
    return flags + [f"--cache_size={cache_size}", f"--cache_type={cache_type}",
                    f"--value_size={a.value_size}", "--compression_type=none",
                    "--cache_numshardbits=-1"]


def run(a, engine, args):
    full = db_bench(a, engine) + args
    if engine == "rocksdb_bench":
        full = [x for x in full if not x.startswith(TALUS_ONLY)]
    settle(a.pause)
    p = subprocess.run(["/usr/bin/time", "-f", "MAXRSS_KB=%M"] + full, capture_output=True,
                       text=True)
    out = p.stdout + p.stderr
    if p.returncode != 0:
        sys.exit(f"{engine} failed ({' '.join(full)}):\n{out[-4000:]}")
    return out


def fill(a, engine, db):
    args = [f"--num={a.num}", f"--db={db}", f"--seed={a.seed}", "--threads=1",
            "--benchmarks=fillrandom,waitforcompaction,compact", "--use_existing_db=0"]
    run(a, engine, args + common(a, 8 << 20, "lru_cache"))


def read(a, engine, db, cache_size, cache_type):
    args = [f"--num={a.num}", f"--db={db}", f"--seed={a.seed}", f"--threads={a.threads}",
            f"--reads={a.reads}", "--benchmarks=readrandom,stats", "--use_existing_db=1",
            "--statistics=true"]
    flags = [f for f in common(a, cache_size, cache_type) if f != "--statistics=false"]
    out = run(a, engine, args + flags)
    m = re.search(r"allocator (\w+)", out)
    if engine == "talus" and m:
        a.allocator = m.group(1)
    rss_kb = int(re.search(r"MAXRSS_KB=(\d+)", out).group(1))
    ops = None
    for line in out.splitlines():
        m = LINE.match(line)
        if m and m.group(1) == "readrandom":
            ops = int(m.group(3))
    usage = None
    m = re.search(r"Block cache \S+ capacity: \S+ \S+ usage: ([0-9.]+) (KB|MB|GB)", out)
    if m:
        usage = float(m.group(1)) * {"KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[m.group(2)]
    else:
        m = re.search(r"block[-_ ]cache[-_ ]usage\D{0,4}(\d+)", out, re.I)
        usage = float(m.group(1)) if m else None
    return {"rss": rss_kb * 1024, "ops": ops, "usage": usage}


def mib(x):
    return "-" if x is None else f"{x / (1 << 20):.0f}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--rocksdb_db_bench")
    p.add_argument("--num", type=int, default=4_000_000)
    p.add_argument("--value_size", type=int, default=400)
    p.add_argument("--caches", default="268435456,1073741824")
    p.add_argument("--cache_types", default="lru_cache,hyper_clock_cache")
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--reads", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--pause", type=float, default=2.0)
    p.add_argument("--dir")
    p.add_argument("--keep", action="store_true", help="keep the databases")
    p.add_argument("--reuse", action="store_true",
                   help="read the databases a previous run left in --dir (same --num, --seed)")
    a = p.parse_args()
    a.allocator = None
    engines = ["talus"] + (["rocksdb_bench"] if a.rocksdb_db_bench else [])
    base = a.dir or tempfile.mkdtemp(prefix="cache_rss.")
    os.makedirs(base, exist_ok=True)
    dbs = {e: os.path.join(base, e) for e in engines}
    for e in engines:
        if a.reuse and os.path.exists(os.path.join(dbs[e], "CURRENT")):
            continue
        if os.path.exists(dbs[e]):
            # Never delete what this run did not make.
            sys.exit(f"{dbs[e]} exists: remove it, or pass --reuse to read it")
        fill(a, e, dbs[e])
        print(f"filled {e}: {mib(sum(os.path.getsize(os.path.join(dbs[e], f)) for f in os.listdir(dbs[e])))} MiB",
              flush=True)
    rows = []
    flip = False
    for cache in [int(c) for c in a.caches.split(",")]:
        for ct in a.cache_types.split(","):
            order = engines[::-1] if flip else engines
            flip = not flip
            res = {}
            for e in order:
                res[e] = read(a, e, dbs[e], cache, ct)
                r = res[e]
                print(f"{e:14} {ct:18} cache {mib(cache):>5} MiB: peak RSS {mib(r['rss'])} MiB, "
                      f"r-delta {mib(r['rss'] - cache)} MiB, cache usage {mib(r['usage'])} MiB, "
                      f"{r['ops']} ops/sec", flush=True)
            rows.append((cache, ct, res))
    print()
    arenas = os.environ.get("MALLOC_ARENA_MAX")
    print(f"Talus allocator: {a.allocator or '?'}; "
          + (f"MALLOC_ARENA_MAX={arenas}" if arenas else "MALLOC_ARENA_MAX unset"))
    print(f"readrandom, {a.threads} threads x {a.reads} reads, {a.num} keys, value {a.value_size} B,"
          " no compression; MiB")
    head = "| cache | cache_type |" + "".join(
        f" {e} peak RSS | {e} r-delta | {e} cache usage | {e} ops/s |" for e in engines)
    print(head)
    print("|" + "---|" * (2 + 4 * len(engines)))
    for cache, ct, res in rows:
        cells = "".join(f" {mib(res[e]['rss'])} | {mib(res[e]['rss'] - cache)} | "
                        f"{mib(res[e]['usage'])} | {res[e]['ops']} |" for e in engines)
        print(f"| {mib(cache)} | {ct} |{cells}")
    if not a.keep and not a.reuse:
        # Only what this run created: its two database directories, and the directory itself
        # if it made it (a --dir given by the caller stays).
        for e in engines:
            shutil.rmtree(dbs[e], ignore_errors=True)
        if not a.dir:
            os.rmdir(base)


if __name__ == "__main__":
    main()
