#!/usr/bin/env python3
"""Where each engine spends an insert of the insert benchmark, by instruction count (callgrind),
so engines compare on a busy machine where timings mean nothing.

usage: bench/ibench_profile.py [--binary=target/rdb/release/talus] [--engines=talus,rocksdb]
                               [--indexes=0,3] [--clients=10] [--num=20000] [--num_i1=10000]
                               [--cache_size=8388608] [--dir=target/scratch/ibench_profile]
                               [--cache_sim]

For each engine and index count (`u`: 3 indexes, the first UNIQUE): builds the database natively
(l.i0 with --num rows per client into one shared table, l.x), copies it, then runs l.i1
(--num_i1 rows per client, the indexes maintained) under `valgrind --tool=callgrind` and splits
the instructions of the run per inserted row:

  client    the client threads (`Writer::load`), of which
    driver  the benchmark's row generation (`RowGen::row`, `to_row`),
    engine  the storage calls (`Storage::write_batch`, `get_at`, `multi_get_at`: the boundary
            talus-table keeps `#[inline(never)]`), and
    table   the rest: talus-table's encoding, index entries, checks and batch building;
  other     every other thread: the engine's flushes and compactions, the reporter, open/close.

With --cache_sim, callgrind also simulates the caches (`--cache-sim=yes`, a 32 KiB 8-way D1
and a 32 MiB 16-way LL: this machine's L1d and L3; no L2, and software prefetches are not
simulated) and the table adds the program's D1 and LL read
misses per inserted row (d1mr, llmr) and those of the memtable inserts (`MemTable::insert_*`:
mt_ir, mt_d1mr, mt_llmr).

Next to them, from the step's results (the engine's own `rocksdb.stats`, the same layout on
both): compaction KB written per insert, KB written per insert (/proc/self/io), stall percent.
Both engines run the same talus-table code above the storage boundary, with every option by
its RocksDB name (the RocksDB opener refuses options that differ). Needs a talus built with
`--features rocksdb` for the rocksdb engine (bench/build_rocksdb_adapter.sh target/rdb), and one
valgrind can run: a RocksDB compiled with -march=native (the CMake tree's PORTABLE=0, which
LINK_TOOLS_LIB=1 links) stops with SIGILL in its static initializers on a CPU with AVX-512, so
profile RocksDB with a build of the crate's own portable flags (no LINK_TOOLS_LIB, no
-march in CXXFLAGS). Talus alone runs from the default build (target/release/talus).
"""
import argparse
import csv
import os
import re
import shutil
import subprocess
import sys

LINE = re.compile(r"^\s*([0-9,]+)\s+\([ 0-9.]+%\)\s+(.*?)(?:\s+\[[^\]]*\])?\s*$")
# One line of `callgrind_annotate --show=Ir,D1mr,DLmr`: three "N (P%)" columns, then the name.
LINE3 = re.compile(r"^\s*([0-9,]+)\s+\([ 0-9.]+%\)\s+([0-9,]+)\s+\([ 0-9.]+%\)\s+([0-9,]+)"
                   r"\s+\([ 0-9.]+%\)\s+(.*?)(?:\s+\[[^\]]*\])?\s*$")
MEMTABLE = re.compile(r"memtable::MemTable::insert_(batch|family)")
GROUPS = {
    "client": re.compile(r"ibench::steps::Writer::load$"),
    "driver": re.compile(r"ibench::(schema::RowGen::row|table_backend::to_row)$"),
    "engine": re.compile(r"Storage for [^>]*>::(write_batch|get_at|multi_get_at)(<.*>)?$"),
}


def inclusive(cg):
    """{function: inclusive Ir} of a callgrind file, and the program total. callgrind_annotate
    lists a function once per source file its code came from, and the inclusive figures of those
    entries overlap (the same calls appear under the function's own file by its relative and its
    absolute path: write_batch's two entries are equal), so the largest entry is taken, not the
    sum (the sum counted the engine's calls twice and made the table layer's share negative)."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", "--show=Ir",
                          cg],
                         capture_output=True, text=True, check=True).stdout
    fns, total = {}, 0
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        n, name = int(m.group(1).replace(",", "")), m.group(2)
        if name.startswith("PROGRAM TOTALS"):
            total = n
            continue
        # "file:function": the file ends at the first ':' after an extension.
        fm = re.match(r"^(\S*?\.[A-Za-z]+|\?\?\?):(.*)$", name)
        fn = fm.group(2) if fm else name
        fns[fn] = max(fns.get(fn, 0), n)
    return fns, total


def misses(cg):
    """(program totals, memtable insert totals) of (Ir, D1mr, DLmr), inclusive, for a callgrind
    file made with --cache-sim=yes. The memtable figure is the largest entry of any function
    MEMTABLE matches (its instances are nested: insert_batch calls insert_batch_with)."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100",
                          "--show=Ir,D1mr,DLmr", cg],
                         capture_output=True, text=True, check=True).stdout
    total, mt = (0, 0, 0), (0, 0, 0)
    for line in out.splitlines():
        m = LINE3.match(line)
        if not m:
            continue
        v = tuple(int(m.group(i).replace(",", "")) for i in (1, 2, 3))
        if m.group(4).startswith("PROGRAM TOTALS"):
            total = v
        elif MEMTABLE.search(m.group(4)):
            mt = max(mt, v)
    return total, mt


def ibench(a, engine, db, steps, n, extra):
    count, unique = (3, ["--unique_index"]) if n == "u" else (int(n), [])
    return [a.binary, "ibench", f"--engine={engine}", f"--db={db}", f"--steps={steps}",
            f"--clients={a.clients}", "--shared_table", f"--num={a.num}",
            f"--num_i1={a.num_i1}", "--data_length=256", "--data_random=0.5",
            f"--secondary_indexes={count}", "--seed=1", "--interval=100",
            f"--cache_size={a.cache_size}"] + unique + extra


def profile(a, engine, n):
    base = os.path.join(a.dir, f"base-{engine}-{n}")
    if not os.path.isdir(base):
        subprocess.run(ibench(a, engine, base, "l.i0,l.x", n, []), check=True,
                       stdout=subprocess.DEVNULL)
    run = os.path.join(a.dir, f"run-{engine}-{n}")
    res = os.path.join(a.dir, f"res-{engine}-{n}")
    shutil.rmtree(run, ignore_errors=True)
    shutil.rmtree(res, ignore_errors=True)
    shutil.copytree(base, run)
    cg = os.path.join(a.dir, f"cg-{engine}-{n}.out")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}"]
    if a.cache_sim:
        # This machine's L1d and L3 (AMD EPYC), fixed so that the figures do not depend on what
        # valgrind detects (it took a 256 MiB direct-mapped LL here).
        cmd += ["--cache-sim=yes", "--D1=32768,8,64", "--LL=33554432,16,64"]
    cmd += ibench(a, engine, run, "l.i1", n, [f"--results={res}"])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{engine} {n}: {p.stderr[-2000:]}")
    shutil.rmtree(run, ignore_errors=True)
    fns, total = inclusive(cg)
    g = {k: sum(v for f, v in fns.items() if r.search(f)) for k, r in GROUPS.items()}
    with open(os.path.join(res, "summary.csv")) as f:
        row = next(r for r in csv.DictReader(f) if r["step"] == "l.i1")
    ins = max(int(row["inserts"]), 1)
    comp = row.get("comp_write_gb") or "0"
    sim = {}
    if a.cache_sim:
        (_, d1, ll), (mir, md1, mll) = misses(cg)
        sim = {"d1mr": d1 / ins, "llmr": ll / ins, "mt_ir": mir / ins, "mt_d1mr": md1 / ins,
               "mt_llmr": mll / ins}
    return sim | {
        "engine": engine, "idx": n, "inserts": ins, "total": total / ins,
        "client": g["client"] / ins, "driver": g["driver"] / ins, "engine_fg": g["engine"] / ins,
        "table": (g["client"] - g["driver"] - g["engine"]) / ins,
        "other": (total - g["client"]) / ins,
        "comp_kb": float(comp) * 1024 * 1024 / ins,
        "w_kb": float(row.get("kb_written_per_insert") or 0),
        "stall": row.get("stall_pct") or "-",
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/rdb/release/talus")
    ap.add_argument("--engines", default="talus,rocksdb")
    ap.add_argument("--indexes", default="0,3")
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--num", type=int, default=20000)
    ap.add_argument("--num_i1", type=int, default=10000)
    ap.add_argument("--cache_size", type=int, default=8 << 20)
    ap.add_argument("--dir", default="target/scratch/ibench_profile")
    ap.add_argument("--cache_sim", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    rows = [profile(a, e, n) for n in a.indexes.split(",") for e in a.engines.split(",")]
    cols = ["engine", "idx", "inserts", "total", "client", "driver", "table", "engine_fg",
            "other", "comp_kb", "w_kb", "stall"]
    if a.cache_sim:
        cols += ["d1mr", "llmr", "mt_ir", "mt_d1mr", "mt_llmr"]
    print("Instructions per inserted row (l.i1, callgrind), compaction and IO per insert:")
    print(" ".join(f"{c:>10}" for c in cols))
    for r in rows:
        print(" ".join(f"{r[c]:>10.0f}" if isinstance(r[c], float) and c not in ("comp_kb", "w_kb", "d1mr", "llmr", "mt_d1mr", "mt_llmr")
                       else f"{r[c]:>10.2f}" if isinstance(r[c], float) else f"{r[c]:>10}"
                       for c in cols))


if __name__ == "__main__":
    main()
