#!/usr/bin/env python3
"""Talus's own regression tracking: CPU per operation across revisions, profiles and allocators.

usage: bench/regress.py --variants SPEC,SPEC[,...] [--variant SPEC]...
                        [--suite cached|cache|sysbench|ibench] [--num N] [--rounds R]
                        [--count auto|perf|callgrind|none] [--count-num N] [--work DIR]
                        [--out DIR] [--build-only] [--sysbench] [--ibench]

SPEC is `[label=]rev:profile:features:rustflags` (empty parts take defaults: the working tree
`.`, profile `release`, no features, no RUSTFLAGS; features joined by `+`), or `[label=]@PATH` for
a `talus` binary built elsewhere. Examples:
  bench/regress.py --variants main~10:release,main:release --num=50000
  bench/regress.py --variants .:release,.:release-lto,.:release:jemalloc,.:release:mimalloc
  bench/regress.py --variant .:release --variant 'native=.:release::-C target-cpu=native'
  bench/regress.py --variants rel=.:release,o2=.:release/opt-level=2,thin=.:release/lto=thin
  bench/regress.py --study=builds --suite=sysbench --count=callgrind
(`--variant` takes one spec, for RUSTFLAGS that contain commas. A profile's settings follow it
after `/`: opt-level, lto, codegen-units; see regress_build.py. `--study=builds` is post 004's
build study: opt-level 2 vs 3, no/thin/fat LTO, codegen-units 1/4/16, target-cpu x86-64-v2,
v3, native, the three allocators.)

Each variant is built into a target dir under --work (see regress_build.py), then the suite
(regress_suites.py) runs on every variant, one process per step, each variant on its own
database. Timed part: --rounds rounds; within a round every step runs on every variant before the
next step, in ABBA order (the order flips every step and every round) so machine noise hits all
variants alike. Per step and variant it records ops/sec (db_bench's result line), user+sys CPU
seconds of that process from wait4's rusage divided by the step's operations, peak RSS
(ru_maxrss) and peak VSZ (VmPeak, polled). Counted part (unless --count=none): one more pass at
--count-num under `perf stat -e instructions:u` (where the kernel allows it) or callgrind; each
measured step runs twice, at its full operation count and at a quarter of it, and instructions
per operation is the difference over the difference of operations, so process start, database
open and cache warm-up cancel out. Under callgrind the same is done for the instructions of the
table layer and of the engine (callgrind_layers.py), printed as their own measures. Before each
measured step on an existing database a `flush` process settles it, so no step pays for the WAL an earlier process left unflushed.

Printed, as post 004 does: per microbenchmark the ratio to the first variant (throughput: higher
is better; CPU/op and instructions/op: lower is better), per group (point / range / write) the
avg, median, min, max and stddev of those ratios, and the geometric mean over all
microbenchmarks. With three or more variants, CPU/op and instructions/op also relative to the
previous variant, and microbenchmarks more than --flag percent worse are named. --out DIR writes
DIR/regress.json (everything measured and the summary; `talus report --results=DIR` draws it)
and keeps each process's output in DIR/logs/.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import regress_build  # noqa: E402
import regress_run  # noqa: E402
import regress_suites  # noqa: E402

GROUPS = ["point", "range", "write", "lru", "clock"]
MEASURES = [
    # key, title, higher is better
    ("ops_sec", "Throughput (ops/sec)", True),
    ("cpu_us_op", "CPU µs per operation (user+sys, getrusage)", False),
    ("instr_op", "Instructions per operation", False),
    # callgrind only (callgrind_layers.py): the same, split by layer, so a regression above the
    # storage engine (table layer) can be told from one in it.
    ("instr_table_op", "Instructions per operation in the table layer (crates/table, callgrind)",
     False),
    ("instr_engine_op", "Instructions per operation in the engine (crates/engine, callgrind)",
     False),
]


def header_build_info(output):
    for line in output.splitlines():
        if line.startswith("Talus:") and "(" in line:
            return line[line.index("(") + 1:line.rindex(")")]
    return ""


def variant_steps(v, suite, num, use_sysbench, not_applicable, use_ibench=False):
    """The steps of `suite` for variant `v`; what the variant cannot run (a revision too old
    for a tool) is appended to `not_applicable`, never silently dropped."""
    steps = regress_suites.SUITES[suite](num)
    if suite == "sysbench" or suite == "cached" and use_sysbench:
        try:
            found, why = regress_suites.sysbench_plugin(v.binary, num)
        except regress_suites.PluginError as e:
            raise SystemExit(f"regress: {v.label}: {e}")
        if why:
            not_applicable.append(f"{v.label}: sysbench: {why}")
        steps += found
    if suite == "ibench" or suite == "cached" and use_ibench:
        found, why = regress_suites.ibench_plugin(v.binary, num)
        if why:
            not_applicable.append(f"{v.label}: ibench: {why}")
        steps += found
    return steps


def run_step(v, step, run_dir, log_dir, tag, counter=None, scale=1.0, shared=False):
    db = os.path.join(run_dir, "shared" if shared else v.label, step.db)
    if step.fresh and scale != 1.0:
        db += ".short"  # a fresh step's short run builds its own database, then drops it
    if step.fresh:
        shutil.rmtree(db, ignore_errors=True)
    if step.settle and step.group:
        regress_run.run(step.settle(v.binary, db),
                        os.path.join(log_dir, v.label, f"{step.name}.{tag}.settle.txt"))
    argv = step.argv(v.binary, db, scale)
    log = os.path.join(log_dir, v.label, f"{step.name}.{tag}.txt")
    p = counter.run(argv, log) if counter else regress_run.run(argv, log)
    if not v.build_info:
        v.build_info = header_build_info(p.output)
    parsed = step.parse(p.output) if p.returncode == 0 else None
    if step.fresh and scale != 1.0:
        shutil.rmtree(db, ignore_errors=True)
    return p, parsed, log


def timed_rounds(variants, steps_of, rounds, run_dir, log_dir, results, errors, shared):
    """`shared`: all variants use one database, whose setup steps run once (see main)."""
    order = [s.name for s in max(steps_of.values(), key=len)]
    loaded = set()
    for r in range(rounds):
        for i, name in enumerate(order):
            vs = variants if (r + i) % 2 == 0 else variants[::-1]
            for v in vs:
                step = next((s for s in steps_of[v.label] if s.name == name), None)
                if step is None or shared and step.group is None and name in loaded:
                    continue
                loaded.add(name)
                p, parsed, log = run_step(v, step, run_dir, log_dir, f"r{r + 1}", shared=shared)
                if step.group is None:
                    if p.returncode != 0:
                        errors.append(f"{v.label} {name} (setup) exit {p.returncode}: {log}")
                    continue
                if not parsed:
                    errors.append(f"{v.label} {name} round {r + 1}: exit {p.returncode}, no "
                                  f"result line: {log}")
                    print(f"round {r + 1} {name:<20} {v.label:<14} FAILED ({log})",
                          file=sys.stderr)
                    continue
                ops, ops_sec = parsed
                cpu = (p.user_s + p.sys_s) / ops * 1e6 if ops else None
                rec = results.setdefault(v.label, {}).setdefault(name, {
                    "ops_sec": [], "cpu_us_op": [], "ops": [], "user_s": [], "sys_s": [],
                    "maxrss_kb": [], "vmpeak_kb": [], "wall_s": []})
                for k, x in (("ops_sec", ops_sec), ("cpu_us_op", cpu), ("ops", ops),
                             ("user_s", p.user_s), ("sys_s", p.sys_s),
                             ("maxrss_kb", p.maxrss_kb), ("vmpeak_kb", p.vmpeak_kb),
                             ("wall_s", p.wall_s)):
                    rec[k].append(x)
                print(f"round {r + 1} {name:<20} {v.label:<14} {ops_sec:>12,.0f} ops/s "
                      f"{cpu:8.3f} CPU µs/op  RSS {p.maxrss_kb / 1024:7.1f} MB",
                      file=sys.stderr, flush=True)


def marginal(got):
    """Instructions per operation from a short and a full run, `[(ops, instructions)] * 2`: the
    difference over the difference, so what both runs pay once (start, open, warm-up) cancels."""
    (ops0, ir0), (ops1, ir1) = got
    return (ir1 - ir0) / (ops1 - ops0) if ops1 > ops0 else ir1 / ops1


def counted_pass(variants, steps_of, counter, run_dir, log_dir, results, errors, shared):
    loaded = set()
    for v in variants:
        uncountable = False
        for step in steps_of[v.label]:
            if shared and step.group is None and step.name in loaded:
                continue
            loaded.add(step.name)
            if uncountable:
                break
            if step.group is None or not step.countable:
                p, _, log = run_step(v, step, run_dir, log_dir, "count", shared=shared)
                if p.returncode != 0:
                    errors.append(f"{v.label} {step.name} (setup, count pass) exit "
                                  f"{p.returncode}: {log}")
                continue
            got = []
            for scale, tag in ((0.25, "count-short"), (1.0, "count")):
                p, parsed, log = run_step(v, step, run_dir, log_dir, tag, counter, scale,
                                          shared)
                if not parsed or p.instructions is None:
                    if "unhandled instruction bytes" in p.output:
                        # valgrind cannot decode this build (AVX-512 from target-cpu=native on
                        # a CPU that has it): no step of it can be counted.
                        uncountable = True
                        errors.append(f"{v.label}: not counted: valgrind cannot decode its "
                                      f"instructions (AVX-512?): {log}")
                        break
                    errors.append(f"{v.label} {step.name} {tag} ({counter.kind}): exit "
                                  f"{p.returncode}, no count: {log}")
                    break
                got.append((parsed[0], p.instructions, p.layers))
            if len(got) != 2:
                continue
            per_op = marginal([(ops, ir) for ops, ir, _ in got])
            rec = results.setdefault(v.label, {}).setdefault(step.name, {})
            rec["instr_op"] = [per_op]
            if all(layers for _, _, layers in got):
                for layer in ("table", "engine"):
                    rec[f"instr_{layer}_op"] = [marginal([(ops, ls[layer])
                                                          for ops, _, ls in got])]
            rec["instr_total"] = [ir for _, ir, _ in got]
            rec["instr_ops"] = [ops for ops, _, _ in got]
            split = ""
            if "instr_table_op" in rec:
                split = (f", table {rec['instr_table_op'][0]:,.0f}, engine "
                         f"{rec['instr_engine_op'][0]:,.0f}")
            print(f"count {step.name:<20} {v.label:<14} {per_op:12,.0f} instructions/op "
                  f"({counter.kind}{split})", file=sys.stderr, flush=True)


def med(results, label, bench, key):
    vals = [x for x in results.get(label, {}).get(bench, {}).get(key, []) if x is not None]
    return statistics.median(vals) if vals else None


def group_stats(ratios):
    if not ratios:
        return None
    return {"avg": statistics.fmean(ratios), "median": statistics.median(ratios),
            "min": min(ratios), "max": max(ratios),
            "stddev": statistics.stdev(ratios) if len(ratios) > 1 else 0.0, "n": len(ratios)}


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else None


def summarize(labels, benches, results, against):
    """Per measure: per-bench medians, ratios to the base (`against`: first or previous) and
    per-group statistics of the ratios."""
    out = {}
    for key, title, higher in MEASURES:
        values = {l: {b: med(results, l, b, key) for b, _ in benches} for l in labels}
        if not any(x is not None for l in labels for x in values[l].values()):
            continue
        ratios, groups, geo = {}, {}, {}
        # Against the first variant, a microbenchmark the first lacks (a revision older than
        # its tool) is relative to the first variant that has it, named in `bases`.
        bases = {}
        if against == "first":
            for b, _ in benches:
                have = [l for l in labels if values[l][b] is not None]
                if have and have[0] != labels[0]:
                    bases[b] = have[0]
        for i, l in enumerate(labels[1:], 1):
            rl = {}
            for b, _ in benches:
                base = bases.get(b, labels[0]) if against == "first" else labels[i - 1]
                x, y = values[l][b], values[base][b]
                rl[b] = x / y if x is not None and y and labels.index(base) < i else None
            ratios[l] = rl
            groups[l] = {g: group_stats([rl[b] for b, bg in benches if bg == g and rl[b]])
                         for g in GROUPS}
            groups[l] = {g: s for g, s in groups[l].items() if s}
            geo[l] = geomean(rl.values())
        out[key] = {"title": title, "higher_is_better": higher, "values": values,
                    "ratios": ratios, "groups": groups, "geomean": geo, "bases": bases}
    return out


def kb_to_mb(kb):
    return round(kb / 1024, 1) if kb else None


def fmt(x, spec):
    return format(x, spec) if x is not None else "-"


def name_width(benches):
    return max([22] + [len(b) + 2 for b, _ in benches])


def print_measure(m, labels, benches, against, flag):
    base = "the first variant" if against == "first" else "the previous variant"
    better = "higher" if m["higher_is_better"] else "lower"
    print(f"\n{m['title']}: value of {labels[0]}, then each variant relative to {base} "
          f"({better} is better)")
    w = max(14, *(len(l) + 2 for l in labels))
    bw = name_width(benches)
    print(f"{'benchmark':<{bw}}{'group':<7}{labels[0]:>{w}}" + "".join(
        f"{l:>{w}}" for l in labels[1:]))
    for b, g in benches:
        v0 = m["values"][labels[0]][b]
        row = f"{b:<{bw}}{g:<7}{fmt(v0, ',.3f' if v0 is not None and v0 < 100 else ',.0f'):>{w}}"
        for l in labels[1:]:
            r = m["ratios"][l][b]
            worse = r is not None and (r < 1 - flag / 100 if m["higher_is_better"]
                                       else r > 1 + flag / 100)
            row += f"{fmt(r, '.3f') + ('*' if worse else ''):>{w}}"
        print(row)
    print(f"{'geomean':<{bw + 7}}{'':>{w}}" + "".join(
        f"{fmt(m['geomean'][l], '.3f'):>{w}}" for l in labels[1:]))
    for b, l in m.get("bases", {}).items():
        print(f"  {b}: {labels[0]} has none; relative to {l}, the first variant that has it")
    print(f"\nSummary statistics of those ratios{' (* = more than ' + str(flag) + '% worse)'}")
    print(f"{'':<22}" + "".join(f"{l:>{w}}" for l in labels[1:]))
    for g in GROUPS:
        if not any(g in m["groups"][l] for l in labels[1:]):
            continue
        for stat in ("avg", "median", "min", "max", "stddev"):
            row = f"{(g.capitalize() + ': ' + stat):<22}"
            for l in labels[1:]:
                s = m["groups"][l].get(g)
                row += f"{fmt(s[stat] if s else None, '.3f' if stat == 'stddev' else '.2f'):>{w}}"
            print(row)


def flagged(summary, labels, benches, flag):
    """Microbenchmarks whose CPU/op or instructions/op is more than `flag`% worse."""
    out = []
    for key in ("instr_op", "cpu_us_op"):
        m = summary.get(key)
        if not m:
            continue
        for l in labels[1:]:
            for b, _ in benches:
                r = m["ratios"][l][b]
                if r is not None and r > 1 + flag / 100:
                    out.append(f"{key} {b}: {l} is {100 * (r - 1):.1f}% worse")
    return out


def print_memory(labels, benches, results):
    w = max(14, *(len(l) + 2 for l in labels))
    bw = name_width(benches)
    print("\nPeak RSS / peak VSZ in MB (median over rounds)")
    print(f"{'benchmark':<{bw}}" + "".join(f"{l:>{w + 6}}" for l in labels))
    for b, _ in benches:
        row = f"{b:<{bw}}"
        for l in labels:
            rss, vsz = kb_to_mb(med(results, l, b, "maxrss_kb")), kb_to_mb(med(results, l, b,
                                                                                "vmpeak_kb"))
            cell = f"{fmt(rss, '.0f')}/{fmt(vsz, '.0f')}"
            row += f"{cell:>{w + 6}}"
        print(row)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variants", action="append", help="comma-separated variant specs")
    ap.add_argument("--variant", action="append", help="one variant spec")
    ap.add_argument("--study", choices=["builds"], help="builds: post 004's build study of "
                    "the working tree (opt-level, LTO, codegen-units, target-cpu, allocators; "
                    "regress_build.BUILD_STUDY), before any --variants")
    ap.add_argument("--suite", default="cached", choices=sorted(regress_suites.SUITES))
    ap.add_argument("--num", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--count", default="auto", choices=["auto", "perf", "callgrind", "none"])
    ap.add_argument("--count-num", type=int, help="--num of the counted pass (default: "
                    "min(--num, 50000))")
    ap.add_argument("--work", default=os.environ.get("TALUS_REGRESS_DIR",
                                                     os.path.join(tempfile.gettempdir(),
                                                                  "talus-regress")))
    ap.add_argument("--out", help="write regress.json and the logs here")
    ap.add_argument("--flag", type=float, default=2.0, help="name CPU/op or instructions/op "
                    "more than this percent worse")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--rebuild", action="store_true", help="rebuild fixed revisions too")
    ap.add_argument("--sysbench", action="store_true", help="suite cached: append the "
                    "sysbench steps (--suite=sysbench runs them alone)")
    ap.add_argument("--ibench", action="store_true", help="suite cached: append the insert "
                    "benchmark's steps (--suite=ibench runs them alone)")
    ap.add_argument("--no-sysbench", action="store_true", help="the default (kept for old "
                    "command lines)")
    ap.add_argument("--worktree-target", help="cargo target dir for `.` variants without "
                    "features or RUSTFLAGS (CI: the checkout's own, already built)")
    a = ap.parse_args()
    study = [",".join(regress_build.BUILD_STUDY)] if a.study == "builds" else []
    variants = regress_build.parse_variants(study + (a.variants or []), a.variant)
    if not variants:
        ap.error("give at least one variant (--variants or --variant)")
    repo = regress_build.git(os.path.dirname(os.path.abspath(__file__)), "rev-parse",
                             "--show-toplevel")
    work = os.path.abspath(a.work)
    started = time.time()
    load_start = regress_run.loadavg()
    build_failed = []
    for v in list(variants):
        try:
            regress_build.build(repo, work, v, a.rebuild, a.worktree_target)
        except regress_build.BuildFailed as e:
            # Reported (here, at the end and in regress.json) and skipped, never dropped unseen.
            print(f"regress: {e}\nregress: {v.label} is skipped", file=sys.stderr, flush=True)
            build_failed.append(f"{v.label} ({v.spec}): {str(e).splitlines()[0]}")
            variants.remove(v)
    if not variants:
        raise SystemExit("regress: no variant built: " + "; ".join(build_failed))
    if a.build_only:
        for v in variants:
            print(f"{v.label}\t{v.binary}")
        for b in build_failed:
            print(f"build failed (skipped): {b}")
        sys.exit(1 if build_failed else 0)
    counter = regress_run.Counter(a.count)
    count_num = a.count_num or min(a.num, 50_000)
    out_dir = os.path.abspath(a.out) if a.out else None
    os.makedirs(work, exist_ok=True)
    run_dir = tempfile.mkdtemp(prefix="run-", dir=work)
    log_dir = os.path.join(out_dir, "logs") if out_dir else os.path.join(run_dir, "logs")
    not_applicable = []
    sysb = a.sysbench and not a.no_sysbench
    steps_of = {v.label: variant_steps(v, a.suite, a.num, sysb, not_applicable, a.ibench)
                for v in variants}
    if not any(s.group for steps in steps_of.values() for s in steps):
        raise SystemExit(f"regress: suite {a.suite} has no step to run on any variant: "
                         + "; ".join(not_applicable or ["(empty suite)"]))
    results, errors = {}, []
    # A suite that only reads after its setup (the cache suite) loads one database for all
    # variants when they are builds of one commit (same files, so any of them can read it).
    shared = (a.suite in regress_suites.SHARED_DB and len({v.sha for v in variants}) == 1
              and bool(variants[0].sha))
    try:
        timed_rounds(variants, steps_of, a.rounds, run_dir, log_dir, results, errors, shared)
        if counter.kind != "none":
            cdir = os.path.join(run_dir, "count")
            csteps = {v.label: variant_steps(v, a.suite, count_num, sysb, [], a.ibench)
                      for v in variants}
            counted_pass(variants, csteps, counter, cdir, log_dir, results, errors, shared)
    finally:
        for d in [v.label for v in variants] + ["shared"]:
            shutil.rmtree(os.path.join(run_dir, d), ignore_errors=True)
        shutil.rmtree(os.path.join(run_dir, "count"), ignore_errors=True)
        if out_dir:
            shutil.rmtree(run_dir, ignore_errors=True)
    labels = [v.label for v in variants]
    benches = []
    for v in variants:
        for s in steps_of[v.label]:
            if s.group and (s.name, s.group) not in benches:
                benches.append((s.name, s.group))
    load_end = regress_run.loadavg()
    print(f"regress: suite {a.suite}, --num={a.num}, {a.rounds} round(s), instructions by "
          f"{counter.kind} at --num={count_num}; load average {load_start} at start, {load_end} "
          f"at end on {os.cpu_count()} CPUs; {time.time() - started:.0f} s")
    for v in variants:
        rev = f"{v.sha[:10]} {v.subject}" if v.sha else v.binary
        print(f"  {v.label:<16} {v.spec:<40} {rev}  [{v.build_info or 'build info not printed'}]")
    summary = {"first": summarize(labels, benches, results, "first"),
               "memory": {l: {b: {"rss_mb": kb_to_mb(med(results, l, b, "maxrss_kb")),
                                  "vsz_mb": kb_to_mb(med(results, l, b, "vmpeak_kb"))}
                              for b, _ in benches} for l in labels}}
    if len(labels) > 2:
        summary["previous"] = {k: m for k, m in summarize(labels, benches, results,
                                                          "previous").items()
                               if k != "ops_sec"}
    if len(labels) > 1:
        for against in ("first", "previous"):
            ms = summary.get(against, {})
            for key, _, _ in MEASURES:
                if key in ms:
                    print_measure(ms[key], labels, benches, against, a.flag)
        bad = flagged(summary.get("previous", summary["first"]), labels, benches, a.flag)
        if "previous" in summary:  # a regression to the base that crept in step by step, too
            bad += [b + " (vs first)" for b in flagged(summary["first"], labels, benches, a.flag)]
        against = "the previous variant" if "previous" in summary else "the first variant"
        print(f"\nCPU/op or instructions/op more than {a.flag}% worse than {against}: "
              + ("none" if not bad else ""))
        for b in bad:
            print(f"  {b}")
    print_memory(labels, benches, results)
    if build_failed:
        print("\nBuild failed (skipped):")
        for b in build_failed:
            print(f"  {b}")
    if not_applicable:
        print("\nNot applicable (not run, not counted):")
        for n in not_applicable:
            print(f"  {n}")
    if errors:
        print(f"\n{len(errors)} failure(s):")
        for e in errors:
            print(f"  {e}")
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        doc = {
            "format": "talus-regress/1", "suite": a.suite, "num": a.num, "rounds": a.rounds,
            "count": counter.kind, "count_num": count_num, "flag_pct": a.flag,
            "loadavg_start": load_start, "loadavg_end": load_end, "cpus": os.cpu_count(),
            "seconds": round(time.time() - started, 1), "command_line": sys.argv,
            "variants": [{"label": v.label, "spec": v.spec, "rev": v.rev, "sha": v.sha,
                          "subject": v.subject, "profile": v.profile, "features": v.features,
                          "rustflags": v.rustflags, "binary": v.binary,
                          "build_info": v.build_info, "build_secs": round(v.build_secs, 1)}
                         for v in variants],
            "benchmarks": [{"name": b, "group": g} for b, g in benches],
            "results": results, "summary": summary, "errors": errors,
            "not_applicable": not_applicable, "build_failed": build_failed,
        }
        with open(os.path.join(out_dir, "regress.json"), "w") as f:
            json.dump(doc, f, indent=1)
        print(f"\nregress: wrote {os.path.join(out_dir, 'regress.json')}")
    sys.exit(1 if errors or build_failed else 0)


if __name__ == "__main__":
    main()
