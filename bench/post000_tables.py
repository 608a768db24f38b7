#!/usr/bin/env python3
"""Post 000's tables from bench/post000.sh's output (OUT/<setup>/<config>/summary.csv).

    bench/post000_tables.py OUT

One markdown table per setup (cached-by-db, cached-by-os, io-bound), a row per configuration
in the order of OUT/<setup>-configs.txt: inserts/s of l.i0 and l.i1, the seconds of l.x,
queries/s of q100 (and whichever q steps ran), the stall % and L0->L1 Avg(sec) of l.i1 (from
the engine's compaction stats: `Stalls`/uptime and the L0 row's average compaction seconds),
and r-delta and v-delta in MB (peak RSS and VSZ minus the block cache, measured during l.x as
post 000 measures them). Each number is also given as a ratio to `base`.
"""
import csv
import os
import sys

SETUPS = ["cached-by-db", "cached-by-os", "io-bound"]


def summary(folder):
    try:
        with open(os.path.join(folder, "summary.csv"), newline="") as f:
            return {r["step"]: r for r in csv.DictReader(f)}
    except OSError:
        return None


def num(rows, step, col):
    try:
        return float(rows[step][col])
    except (KeyError, TypeError, ValueError):
        return None


def configs(out, setup):
    names = []
    try:
        with open(os.path.join(out, f"{setup}-configs.txt")) as f:
            for line in f:
                w = line.split()
                if w and not w[0].startswith("#"):
                    names.append(w[0])
    except OSError:
        pass
    return names


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    for setup in SETUPS:
        names = configs(out, setup)
        data = {n: summary(os.path.join(out, setup, n)) for n in names}
        data = {n: r for n, r in data.items() if r}
        if not data:
            continue
        qsteps = sorted({s for r in data.values() for s in r if s.startswith("q")},
                        key=lambda s: int(s[1:]) if s[1:].isdigit() else 0)
        cols = [("l.i0", "ips", "l.i0 ips"), ("l.x", "secs", "l.x s"), ("l.i1", "ips", "l.i1 ips")]
        cols += [(q, "qps", f"{q} qps") for q in qsteps]
        cols += [("l.i1", "stall_pct", "l.i1 stall %"), ("l.i1", "l0_base_avg_sec",
                                                         "l.i1 L0->L1 Avg(sec)"),
                 ("l.x", "r_delta_kb", "r-delta MB"), ("l.x", "v_delta_kb", "v-delta MB")]
        base = data.get("base")
        print(f"### {setup}\n")
        print("| config | " + " | ".join(c[2] for c in cols) + " |")
        print("|---" * (len(cols) + 1) + "|")
        for n, rows in data.items():
            cells = []
            for step, col, _ in cols:
                v = num(rows, step, col)
                if v is None:
                    cells.append("")
                    continue
                if col.endswith("_kb"):
                    v /= 1024
                d = 2 if col in ("l0_base_avg_sec",) else (1 if col in ("stall_pct", "secs") else 0)
                cell = f"{v:,.{d}f}"
                b = num(base, step, col) if base else None
                if b and n != "base" and col in ("ips", "qps", "secs"):
                    cell += f" ({v / b:.2f})"
                cells.append(cell)
            print(f"| {n} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()
