#!/usr/bin/env python3
"""Talus from Python against rocksdict (RocksDB), plyvel (LevelDB) and lmdb: put, batches of
100, get, multi_get (100 keys), a full scan; interleaved rounds, the same data, CPU per
operation beside the throughput. Also the binding's cost per call against a Rust loop.

usage:
  bench/python_bench.py run [--engines talus,rust,rocksdict,plyvel,lmdb,noop] [--num 1000000]
                            [--rounds 6] [--seed 1] [--dir DIR] [--json FILE]
  bench/python_bench.py count [--num 20000] [--engines talus,rust,noop] [--dir DIR]

run: every (round, engine) is a child process (bench/python_bench_child.py; for `rust`, the
Rust loop crates/engine/examples/python_bench_ops.rs, built by cargo here) on a fresh database
under --dir, deleted afterwards. The engine order alternates per round (A B C D, D C B A, ...:
ABBA), the data is a function of --num and --seed only (the child's doc says which), and each
phase's data is built before its clock starts. Printed per phase and engine: the median of
the calls per second, its range, wall and CPU microseconds per call (CPU: the process,
background threads included; thread: the calling thread only), and Talus's paired ratio per
round (median, range) of the calls per second: talus / engine (above 1: Talus is faster),
rust / talus for the Rust loop (above 1: what the binding and Python cost).

count: the instructions per call of each phase under callgrind (valgrind --tool=callgrind),
for the Talus package, the Rust loop and the no-op Python loop, by difference of runs that
stop after phase k and after phase k-1 (every run builds all data first and exits without
closing; the Python children run without the cyclic GC). The binding's cost per call is then
talus - rust, and talus - rust - noop without the interpreter's loop (noop calls C no-ops:
`operator.is_`, `len`). Instruction counts do not depend on a busy machine; timings do. Runs
differ by a few million instructions in total (thread start-up, allocator state), so use a
--num large enough that this is small per call (20000: about +-100 per call).

The packages: `pip install ./crates/python rocksdict plyvel lmdb` into the Python that runs
this (the children use sys.executable). Nothing here draws a conclusion: read the table.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CHILD = os.path.join(HERE, "python_bench_child.py")
PHASES = ["put", "batch100", "flush", "get", "multi_get", "iterate"]
RUST_EXAMPLE = "python_bench_ops"


def rust_loop():
    """Builds the Rust loop (release) and returns its path."""
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "talus", "--example", RUST_EXAMPLE],
                   cwd=ROOT, check=True)
    out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    return os.path.join(json.loads(out)["target_directory"], "release", "examples", RUST_EXAMPLE)


def command(engine, db, num, seed, phases, rust_bin, extra=(), py_extra=()):
    args = [f"--db={db}", f"--num={num}", f"--seed={seed}", f"--phases={','.join(phases)}"]
    args += list(extra)
    if engine == "rust":
        return [rust_bin] + args
    return [sys.executable, CHILD, f"--engine={engine}"] + args + list(py_extra)


def run_child(cmd, prefix=()):
    p = subprocess.run(list(prefix) + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-3000:]}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")], p


def orders(engines, rounds):
    """A B C D, D C B A, A B C D, ...: each engine as often first as last."""
    return [list(engines) if r % 2 == 0 else list(reversed(engines)) for r in range(rounds)]


def fmt_range(xs, f="{:.0f}"):
    return f"{f.format(min(xs))}-{f.format(max(xs))}"


def report(results, engines, rounds):
    """results[engine][round] = {phase: row}."""
    print(f"\n{'phase':<10} {'engine':<10} {'calls/s':>12} {'range':>19} {'wall us':>9} "
          f"{'CPU us':>8} {'thread us':>9} {'keys/call':>9}  paired ratio (median, range)")
    for phase in PHASES:
        for e in engines:
            rows = [results[e][r][phase] for r in range(rounds) if phase in results[e][r]]
            if not rows or rows[0]["ops"] == 0:
                continue
            rate = [x["ops"] / x["wall_s"] for x in rows if x["wall_s"] > 0]
            per = lambda key: statistics.median(x[key] / x["ops"] * 1e6 for x in rows)  # noqa
            ratio = ""
            if e != "talus" and "talus" in results:
                pairs = []
                for r in range(rounds):
                    t, o = results["talus"][r].get(phase), results[e][r].get(phase)
                    if t and o and t["wall_s"] > 0 and o["wall_s"] > 0:
                        tr, orate = t["ops"] / t["wall_s"], o["ops"] / o["wall_s"]
                        pairs.append(orate / tr if e == "rust" else tr / orate)
                if pairs:
                    label = "rust/talus" if e == "rust" else f"talus/{e}"
                    ratio = (f"{label} {statistics.median(pairs):.2f} "
                             f"({fmt_range(pairs, '{:.2f}')})")
            print(f"{phase:<10} {e:<10} {statistics.median(rate):>12.0f} {fmt_range(rate):>19} "
                  f"{per('wall_s'):>9.2f} {per('proc_cpu_s'):>8.2f} {per('thread_cpu_s'):>9.2f} "
                  f"{rows[0]['keys'] / rows[0]['ops']:>9.0f}  {ratio}")


def cmd_run(a):
    engines = a.engines.split(",")
    rust_bin = rust_loop() if "rust" in engines else None
    base = a.dir or tempfile.mkdtemp(prefix="python_bench_")
    os.makedirs(base, exist_ok=True)
    print(f"# python_bench run: num={a.num} rounds={a.rounds} seed={a.seed} dir={base}")
    print(f"# python {sys.version.split()[0]} ({sys.executable}); engines {engines}")
    results = {e: [None] * a.rounds for e in engines}
    for r, order in enumerate(orders(engines, a.rounds)):
        for e in order:
            db = os.path.join(base, f"{e}-r{r}")
            shutil.rmtree(db, ignore_errors=True)
            rows, _ = run_child(command(e, db, a.num, a.seed, PHASES, rust_bin))
            results[e][r] = {x["phase"]: x for x in rows}
            shutil.rmtree(db, ignore_errors=True)
            print(f"round {r} {e}: " + ", ".join(
                f"{x['phase']} {x['ops'] / x['wall_s']:.0f}/s" for x in rows if x["wall_s"] > 0),
                flush=True)
    report(results, engines, a.rounds)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "results": results}, f, indent=1)


def callgrind_total(path):
    with open(path) as f:
        for line in f:
            m = re.match(r"(?:summary|totals): (\d+)", line)
            if m:
                return int(m.group(1))
    raise SystemExit(f"no totals in {path}")


def cmd_count(a):
    engines = a.engines.split(",")
    rust_bin = rust_loop() if "rust" in engines else None
    base = a.dir or tempfile.mkdtemp(prefix="python_bench_count_")
    os.makedirs(base, exist_ok=True)
    print(f"# python_bench count: num={a.num} seed={a.seed} (callgrind, instructions per call)")
    per = {}
    for e in engines:
        totals, calls = [], {}
        for k in range(len(PHASES) + 1):
            db = os.path.join(base, f"{e}-{k}")
            shutil.rmtree(db, ignore_errors=True)
            out = os.path.join(base, f"callgrind.{e}.{k}")
            prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
            rows, _ = run_child(command(e, db, a.num, a.seed, PHASES[:k], rust_bin,
                                        ["--pregen", "--no_close"], ["--no_gc"]), prefix)
            totals.append(callgrind_total(out))
            calls.update({x["phase"]: x["ops"] for x in rows})
            shutil.rmtree(db, ignore_errors=True)
            os.remove(out)
        per[e] = {p: (totals[i + 1] - totals[i]) / calls[p] for i, p in enumerate(PHASES)
                  if calls.get(p)}
        print(f"{e}: " + ", ".join(f"{p} {v:.0f}" for p, v in per[e].items()), flush=True)
    print(f"\n{'phase':<10} " + " ".join(f"{e:>12}" for e in engines), end="")
    both = "talus" in per and "rust" in per
    print(f" {'talus-rust':>11} {'-noop':>9}" if both else "")
    for p in PHASES:
        if p == "flush" or not all(p in per[e] for e in engines):
            continue  # one call, mostly background work: not a per-call cost
        line = f"{p:<10} " + " ".join(f"{per[e][p]:>12.0f}" for e in engines)
        if both:
            d = per["talus"][p] - per["rust"][p]
            line += f" {d:>11.0f}"
            if "noop" in per:
                line += f" {d - per['noop'][p]:>9.0f}"
        print(line)
    print("(instructions per call; batch100 and multi_get calls carry 100 keys each)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--engines", default="talus,rust,rocksdict,plyvel,lmdb")
    r.add_argument("--num", type=int, default=1_000_000)
    r.add_argument("--rounds", type=int, default=6)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--dir")
    r.add_argument("--json")
    c = sub.add_parser("count")
    c.add_argument("--engines", default="talus,rust,noop")
    c.add_argument("--num", type=int, default=20_000)
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--dir")
    a = ap.parse_args()
    cmd_run(a) if a.cmd == "run" else cmd_count(a)


if __name__ == "__main__":
    main()
