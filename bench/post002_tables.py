#!/usr/bin/env python3
"""Post 002's tables from the result folders bench/oltp.sh's ratelimit and compression phases
write (DIR/res/ratelimit/<engine>-rl<bytes>, DIR/res/sqlite, DIR/res/compression/<engine>-<c>).

    bench/post002_tables.py DIR/res

One markdown table per phase, a row per run: tpmC (NewOrder per minute over the run), the
standard deviation and the minimum of the per-interval tpmC (the intervals of the run's
--report_interval, the first one left out as the warm-up), p95 ms per transaction kind, the
database's size at the end, and what the engine did (from run.intervals.csv's engine-state
columns): intervals with writes stopped or delayed, the largest L0 file count and immutable
memtable count, flush + compaction MB written, compaction MB read, and the seconds requests
waited on the IO throttle (summed over threads). Empty cells: the engine has no such state
(SQLite) or the column is missing.
"""
import csv
import os
import statistics
import sys

KINDS = [("new_order", "NO"), ("payment", "P"), ("order_status", "OS"), ("delivery", "D"),
         ("stock_level", "SL")]


def read_csv(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def row_of(name, folder):
    s = read_csv(os.path.join(folder, "summary.csv"))
    if not s:
        return None
    s = s[-1]
    iv = read_csv(os.path.join(folder, "run.intervals.csv"))
    tpm = [num(r.get("tpmc")) for r in iv[1:]]
    tpm = [x for x in tpm if x is not None]

    def col(c):
        return [x for x in (num(r.get(c)) for r in iv) if x is not None]

    def fmt(v, d=0):
        return "" if v is None else f"{v:,.{d}f}"

    stall = [r.get("stall", "") for r in iv]
    has_state = any(s for s in stall)
    l0, imm = col("l0_files"), col("imm_memtables")
    wr = col("flush_write_mb") + col("compact_write_mb")
    cr, wait = col("compact_read_mb"), col("throttle_wait_ms")
    cells = [
        name,
        fmt(num(s["tpmc"])),
        fmt(statistics.pstdev(tpm)) if len(tpm) > 1 else "",
        fmt(min(tpm)) if tpm else "",
        " / ".join(fmt(num(s.get(f"p95_ms_{k}")), 1) for k, _ in KINDS),
        fmt(num(s["db_bytes"]) / 1048576, 0),
        f"{stall.count('stopped')} / {stall.count('delayed')}" if has_state else "",
        fmt(max(l0)) if has_state and l0 else "",
        fmt(max(imm)) if has_state and imm else "",
        fmt(sum(wr)) if has_state and wr else "",
        fmt(sum(cr)) if has_state and cr else "",
        fmt(sum(wait) / 1000, 1) if has_state and wait else "",
    ]
    return "| " + " | ".join(cells) + " |"


HEAD = ("| run | tpmC | stddev of interval tpmC | min interval tpmC | p95 ms NO / P / OS / D / SL "
        "| size MB | intervals stopped / delayed | max L0 files | max imm memtables "
        "| flush+compaction MB written | compaction MB read | throttle wait s |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|")


def rl_key(name):
    eng, _, rate = name.partition("-rl")
    return (int(rate) if rate.isdigit() else -1, eng)


def main():
    res = sys.argv[1] if len(sys.argv) > 1 else "res"
    for phase in ["ratelimit", "compression"]:
        d = os.path.join(res, phase)
        if not os.path.isdir(d):
            continue
        names = sorted(os.listdir(d), key=rl_key if phase == "ratelimit" else str)
        print(f"### {phase}\n\n{HEAD}")
        for n in names:
            label = n
            if phase == "ratelimit" and "-rl" in n:
                eng, _, rate = n.partition("-rl")
                label = f"{eng}, rate limiter " + ("off" if rate == "0" else
                                                   f"{int(rate) / 1048576:g} MB/s")
            r = row_of(label, os.path.join(d, n))
            if r:
                print(r)
        print()


if __name__ == "__main__":
    main()
