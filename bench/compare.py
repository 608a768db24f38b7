#!/usr/bin/env python3
"""Runs a db_bench suite on several engines, interleaved, and prints a comparison table.

usage: bench/compare.py [--num N] [--rounds R] [--engines talus,rocksdb,memory]
                        [--binary PATH] [--tsv FILE] [--dir DIR]

Each round runs every step on every engine before the next round starts, so machine noise hits
all engines alike. A step is one `talus db_bench` process (as RocksDB's tools/benchmark.sh runs
them); steps that read an existing database reuse the one the fill steps built. The `memory`
engine keeps nothing between processes, so each of its read steps first loads the keys with
fillrandom in the same process (only the step's own result line is reported).

Suite "cached" (issue 5): --key_size=16 --value_size=100 --compression_type=lz4
--cache_size=1073741824 --bloom_bits=10 --threads=1, WAL on, sync off.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

COMMON = ["--key_size=16", "--value_size=100", "--compression_type=lz4",
          "--cache_size=1073741824", "--bloom_bits=10", "--threads=1"]

LINE = re.compile(r"^(\w+)\s+:\s+([0-9.]+) micros/op (\d+) ops/sec.*?(?:([0-9.]+) MB/s)?\s*$")
PCT = re.compile(r"^Percentiles: P50: ([0-9.]+) P75: [0-9.]+ P99: ([0-9.]+) P99\.9: ([0-9.]+) "
                 r"P99\.99: ([0-9.]+)")
MAX = re.compile(r"^Min: \S+\s+Median: \S+\s+Max: ([0-9.]+)")
STALL = re.compile(r"^Cumulative stall: \S+ H:M:S, ([0-9.]+) percent")

# benchmark.sh's summary columns (tools/benchmark.sh), in its order.
TSV_COLS = ["ops_sec", "mb_sec", "lsm_sz", "c_wgb", "w_amp", "usec_op", "p50", "p99", "p99.9",
            "p99.99", "pmax", "stall%", "rss"]


def steps(n):
    """(label, benchmarks, extra flags, needs existing db, fresh db)"""
    return [
        ("fillseq", "fillseq", [], False, True),
        ("fillrandom", "fillrandom,stats", [], False, True),
        ("overwrite", "overwrite,stats", [], True, False),
        ("readrandom", "compact,readrandom", [f"--reads={n // 2}"], True, False),
        ("seekrandom", "seekrandom", [f"--reads={n // 10}", "--seek_nexts=10"], True, False),
        ("readwhilewriting", "readwhilewriting",
         [f"--reads={n // 5}", "--benchmark_write_rate_limit=2000000"], True, False),
        ("readrandom_t2", "readrandom", [f"--reads={n // 2}", "--threads=2"], True, False),
    ]


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def run_step(binary, engine, n, db, label, benchmarks, extra, existing):
    args = [binary, "db_bench", f"--engine={engine}", f"--num={n}", f"--db={db}",
            "--histogram=1"] + COMMON + extra
    if engine == "memory" and existing:
        benchmarks = "fillrandom," + benchmarks
        existing = False
    args.append(f"--benchmarks={benchmarks}")
    args.append(f"--use_existing_db={1 if existing else 0}")
    timed = ["/usr/bin/time", "-f", "MAXRSS_KB=%M"] + args
    p = subprocess.run(timed, capture_output=True, text=True)
    out = p.stdout + p.stderr
    if p.returncode != 0:
        sys.exit(f"step {label} on {engine} failed:\n{out}")
    want = [b for b in benchmarks.split(",") if b not in ("stats", "compact", "flush")][-1]
    result = None
    pct = None
    pmax = None
    seen_want = False
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            seen_want = m.group(1) == want
            if seen_want:
                mb = float(m.group(4)) if m.group(4) else None
                result = (float(m.group(2)), int(m.group(3)), mb)
            continue
        # The histogram printed right after the step's own result line (the first one: a
        # readwhilewriting's reader histogram precedes its writer's).
        if seen_want and pct is None and PCT.match(line):
            pct = [float(x) for x in PCT.match(line).groups()]
        if seen_want and pmax is None and MAX.match(line):
            pmax = float(MAX.match(line).group(1))
    wamp = None
    c_wgb = None
    stall = None
    wamp_col = None
    wgb_col = None
    for line in out.splitlines():
        cols = line.split()
        if "W-Amp" in cols and cols[0] == "Level":
            # Size is two tokens ("7.1 MB"), so data columns sit one to the right of the header.
            wamp_col = cols.index("W-Amp") + 1
            wgb_col = cols.index("Write(GB)") + 1
        elif cols and cols[0] == "Sum" and wamp_col is not None:
            try:
                wamp = float(cols[wamp_col])
                c_wgb = float(cols[wgb_col])
            except (IndexError, ValueError):
                pass
        m = STALL.match(line)
        if m:
            stall = float(m.group(1))
    rss = int(re.search(r"MAXRSS_KB=(\d+)", out).group(1))
    res = {"usec_op": result[0] if result else None, "ops_sec": result[1] if result else None,
           "mb_sec": result[2] if result else None, "w_amp": wamp, "c_wgb": c_wgb,
           "stall%": stall, "rss_kb": rss, "pmax": pmax,
           "db_bytes": du(db) if engine != "memory" and os.path.isdir(db) else None}
    for k, v in zip(["p50", "p99", "p99.9", "p99.99"], pct or [None] * 4):
        res[k] = v
    return res

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num", type=int, default=5_000_000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--engines", default="talus,rocksdb,memory")
    ap.add_argument("--binary", default="target/release/talus")
    ap.add_argument("--tsv")
    ap.add_argument("--dir")
    a = ap.parse_args()
    engines = a.engines.split(",")
    base = a.dir or tempfile.mkdtemp(prefix="talus-compare-")
    results = {}  # (engine, label) -> list of dicts
    for r in range(a.rounds):
        for label, benchmarks, extra, existing, fresh in steps(a.num):
            for e in engines:
                db = os.path.join(base, e)
                if fresh and os.path.exists(db):
                    shutil.rmtree(db)
                res = run_step(a.binary, e, a.num, db, label, benchmarks, extra, existing)
                results.setdefault((e, label), []).append(res)
                print(f"round {r + 1} {label:<17} {e:<8} {res['ops_sec']} ops/sec", file=sys.stderr)
    labels = [s[0] for s in steps(a.num)]

    def med(e, label, key):
        vals = [x[key] for x in results.get((e, label), []) if x[key] is not None]
        return statistics.median(vals) if vals else None

    hdr = f"{'benchmark':<17}" + "".join(f"{e + ' ops/s':>16}" for e in engines)
    hdr += f"{'talus/rocksdb':>15}{'talus/memory':>14}{'W-Amp t/r':>12}{'size MB t/r':>16}{'RSS MB t/r':>14}"
    print(hdr)
    tsv = ["engine\tbenchmark\t" + "\t".join(TSV_COLS)]
    key_of = {"lsm_sz": "db_bytes", "rss": "rss_kb"}
    for label in labels:
        row = f"{label:<17}"
        for e in engines:
            v = med(e, label, "ops_sec")
            row += f"{(f'{v:,.0f}' if v else '-'):>16}"
            vals = []
            for c in TSV_COLS:
                x = med(e, label, key_of.get(c, c))
                if c == "lsm_sz" and x is not None:
                    x = f"{x / (1 << 30):.3f}GB"
                elif c == "rss" and x is not None:
                    x = f"{x / (1 << 20):.2f}"  # GB, as benchmark.sh's rss column
                vals.append("" if x is None else str(x))
            tsv.append(f"{e}\t{label}\t" + "\t".join(vals))

        def ratio(x, y, key="ops_sec"):
            a_, b_ = med(x, label, key), med(y, label, key)
            return f"{a_ / b_:.2f}" if a_ and b_ else "-"

        def pair(key, scale=1.0, fmt="{:.1f}"):
            t, r_ = med("talus", label, key), med("rocksdb", label, key)
            s = lambda v: fmt.format(v / scale) if v is not None else "-"
            return f"{s(t)}/{s(r_)}"
        row += f"{ratio('talus', 'rocksdb'):>15}{ratio('talus', 'memory'):>14}"
        row += f"{pair('w_amp'):>12}{pair('db_bytes', 1 << 20, '{:.0f}'):>16}{pair('rss_kb', 1024, '{:.0f}'):>14}"
        print(row)
    if a.tsv:
        with open(a.tsv, "w") as f:
            f.write("\n".join(tsv) + "\n")
    if not a.dir:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
