"""Talus / RocksDB ratios of bench/table_engines_ab.sh's runs (issue 35's targets).

    python3 bench/table_engines_ratio.py DIR

sysbench: per test, each engine's throughput (tps) is the geometric mean of its runs (ABBA: two
each), the ratio Talus/RocksDB, and the same for client-thread CPU per query (RocksDB/Talus: above
1 means Talus spends less); per group (point, range, write) the geometric mean of the ratios.
TPC-C: tpmC, the load rate (prepare's rows/s) and the run's process CPU (user + sys, from
/usr/bin/time) per transaction, per run, and the ratio of the geometric means (Talus/RocksDB;
RocksDB/Talus for CPU: above 1 is Talus better in all three).
Prints a Markdown table (docs/design/table-engines.md quotes it).
"""
import csv
import glob
import math
import os
import re
import sys


def geomean(v):
    v = [x for x in v if x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def sysbench(d):
    runs = {}
    for f in sorted(glob.glob(os.path.join(d, "res/sysbench/*/summary.csv"))):
        engine = os.path.basename(os.path.dirname(f)).rsplit("-", 1)[0]
        with open(f) as fh:
            for row in csv.DictReader(fh):
                key = (row["test"], row["group"])
                r = runs.setdefault(key, {}).setdefault(engine, {"tps": [], "cpu": []})
                r["tps"].append(float(row["tps"]))
                cpu = row.get("thread_cpu_us_per_query") or row.get("cpu_us_per_query") or "0"
                r["cpu"].append(float(cpu or 0))
    if not runs:
        return
    print("| test | group | talus tps | rocksdb tps | tps ratio | talus CPU us/q | "
          "rocksdb CPU us/q | CPU ratio (R/T) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    groups = {}
    for (test, group), e in runs.items():
        if "talus" not in e or "rocksdb" not in e:
            continue
        t, r = geomean(e["talus"]["tps"]), geomean(e["rocksdb"]["tps"])
        tc, rc = geomean(e["talus"]["cpu"]), geomean(e["rocksdb"]["cpu"])
        groups.setdefault(group, []).append((t / r, rc / tc))
        print(f"| {test} | {group} | {t:,.0f} | {r:,.0f} | {t / r:.2f} | {tc:.1f} | {rc:.1f} "
              f"| {rc / tc:.2f} |")
    print()
    print("| group | tests | geomean tps ratio | geomean CPU ratio (R/T) |")
    print("| --- | ---: | ---: | ---: |")
    for g in ("point", "range", "write"):
        if g in groups:
            v = groups[g]
            print(f"| {g} | {len(v)} | {geomean([a for a, _ in v]):.2f} | "
                  f"{geomean([b for _, b in v]):.2f} |")
    print()


def tpcc(d):
    load, tpm, cpu = {}, {}, {}
    for f in sorted(glob.glob(os.path.join(d, "log/tpcc-prepare-*.log"))):
        m = re.search(r"tpcc-prepare-(\w+)-(\d+)\.log$", f)
        txt = open(f).read()
        r = re.findall(r"([\d,]+(?:\.\d+)?)\s*rows/s", txt)
        if m and r:
            load.setdefault(m.group(1), []).append(float(r[-1].replace(",", "")))
    for f in sorted(glob.glob(os.path.join(d, "log/tpcc-*-*.log"))):
        m = re.search(r"tpcc-(talus|rocksdb)-(\d+)\.log$", f)
        if not m:
            continue
        txt = open(f).read()
        r = re.findall(r"tpmC \(NewOrder per minute\):\s+([\d.]+)", txt)
        if r:
            tpm.setdefault(m.group(1), []).append(float(r[-1].replace(",", "")))
        n = re.findall(r"transactions:\s+(\d+)", txt)
        c = re.findall(r"process CPU: user ([\d.]+) s, sys ([\d.]+) s", txt)
        if n and c:
            us = (float(c[-1][0]) + float(c[-1][1])) * 1e6 / int(n[-1])
            cpu.setdefault(m.group(1), []).append(us)
    for name, v in (("TPC-C load rows/s", load), ("tpmC", tpm),
                    ("TPC-C process CPU us per transaction (ratio R/T)", cpu)):
        if "talus" in v and "rocksdb" in v:
            t, r = geomean(v["talus"]), geomean(v["rocksdb"])
            ratio = r / t if v is cpu else t / r  # above 1: Talus better
            runs = " / ".join(f"{e}: " + ", ".join(f"{x:,.0f}" for x in v[e])
                              for e in ("talus", "rocksdb"))
            print(f"{name}: talus {t:,.0f}, rocksdb {r:,.0f}, ratio {ratio:.2f} ({runs})")


if __name__ == "__main__":
    d = sys.argv[1]
    sysbench(d)
    tpcc(d)
