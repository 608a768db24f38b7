#!/usr/bin/env python3
"""Runs a db_bench suite on several engines, interleaved, and prints a comparison table.

usage: bench/compare.py [--num N] [--rounds R] [--engines talus,rocksdb_bench,rocksdb,memory]
                        [--binary PATH] [--rocksdb_db_bench PATH] [--value_size N]
                        [--read_threads N] [--seed S] [--accept_option_diff a,b]
                        [--tsv FILE] [--dir DIR] [--pause SECONDS]

Engines:
  talus          `talus db_bench --engine=talus`
  rocksdb        `talus db_bench --engine=rocksdb` (the harness's adapter over RocksDB's C API,
                 with db_bench's put and get in a small C++ shim; needs a binary built with
                 `--features rocksdb`: bench/build_rocksdb_adapter.sh builds it with the
                 platform defines RocksDB's CMake build uses, without which librocksdb-sys's
                 RocksDB neither preallocates nor range-syncs files)
  rocksdb_bench  RocksDB's own db_bench (`--rocksdb_db_bench=PATH`, e.g. the release build of
                 bench/build_rocksdb_tools.sh): the yardstick
  memory         `talus db_bench --engine=memory` (an ordered map behind a lock: the ceiling)

Method (issue 12): every engine gets the same explicit flag list (no engine default is relied
on; the list is printed); a fixed --seed, so both db_bench's generate the same keys (Talus's
db_bench uses RocksDB's Random64) and the `(found of read)` counts must be equal between engines
or the step fails; the engine order alternates per round (ABBA); before each process on an
existing database its files are read once (page cache warm, see `warm`), then `sync` and a
pause; `waitforcompaction` after every write step, so W-Amp and size include the compaction
debt each engine left; min/median/max over rounds. Before the first round each engine writes its
OPTIONS file on an empty database and the options both engines have must be equal, or the run is
refused unless --accept_option_diff names the differences (printed with the table).

Suite "explicit" (the default; issue 5's "cached"): --key_size=16 --value_size=100
--compression_type=lz4 --cache_size=1073741824 --bloom_bits=10 --threads=1, WAL on, sync off, and
every other option spelled out (COMMON). Variants: --value_size, --key_size; --read_threads=2 (every
read step with 2 threads).

Suite "defaults" (--suite=defaults, issue 36): each engine's defaults but for DEFAULTS (lz4, a 1 GiB
cache, 10 bloom bits, dynamic level bytes, 2 background jobs); the OPTIONS files are diffed and the
differences printed, not refused. bench/compare_defaults.sh runs it across value sizes.

Steps of both: fillseq, fillrandom, overwrite, readrandom, seekrandom, readwhilewriting,
readrandom_t2 (2 reader threads), fillrandom_t2 (2 writer threads, fresh database).

Engine talus_native: the same db_bench built with RUSTFLAGS="-C target-cpu=native"
(--binary_native); talus is then the user's build (release-lto, generic x86-64).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_options import options_check  # noqa: E402

# Every option the suite depends on, explicitly, with RocksDB db_bench's spelling. Where RocksDB's
# db_bench default and the adapter's cannot both be set (delayed_write_rate and the LRU
# high-priority pool ratio have no setter in RocksDB's C API) the adapter's effective value is used
# for all.
COMMON = [
    "--key_size=16", "--value_size=100", "--compression_type=lz4", "--compression_ratio=0.5",
    "--cache_size=1073741824", "--cache_type=lru_cache", "--cache_numshardbits=6",
    "--cache_high_pri_pool_ratio=0.5", "--cache_index_and_filter_blocks=false",
    "--pin_l0_filter_and_index_blocks_in_cache=false", "--pin_top_level_index_and_filter=false",
    "--bloom_bits=10", "--block_size=4096", "--checksum_type=4", "--threads=1",
    "--write_buffer_size=67108864", "--max_write_buffer_number=2",
    "--level0_file_num_compaction_trigger=4", "--level0_slowdown_writes_trigger=20",
    "--level0_stop_writes_trigger=36", "--max_bytes_for_level_base=268435456",
    "--max_bytes_for_level_multiplier=10", "--target_file_size_base=67108864",
    "--target_file_size_multiplier=1", "--num_levels=7", "--compaction_style=0",
    "--level_compaction_dynamic_level_bytes=true", "--max_background_jobs=2", "--open_files=-1",
    "--subcompactions=1", "--table_cache_numshardbits=4", "--delayed_write_rate=16777216",
    "--soft_pending_compaction_bytes_limit=68719476736",
    "--hard_pending_compaction_bytes_limit=274877906944", "--wal_bytes_per_sync=0",
    "--enable_pipelined_write=true", "--allow_concurrent_memtable_write=true",
    "--verify_checksum=true", "--sync=false", "--disable_wal=false", "--perf_level=1",
    "--statistics=false", "--histogram=1",
    # RocksDB's allow_mmap_writes (its default): SSTs written with write(2) by both engines.
    # (RocksDB never maps its WAL: PosixFileSystem::OptimizeForLogWrite turns it off.)
    "--mmap_write=false",
]
# Suite "defaults" (issue 36): RocksDB's default options, with only these set (and --key_size,
# --value_size); every other option is each engine's own default, so the OPTIONS files differ
# and are printed, not refused.
DEFAULTS = [
    "--compression_type=lz4", "--cache_size=1073741824", "--bloom_bits=10",
    "--level_compaction_dynamic_level_bytes=true", "--max_background_jobs=2", "--histogram=1",
]
# Flags only Talus's db_bench has.
TALUS_ONLY = ("--engine=",)
# Design choices of the talus engine that RocksDB has no option for, passed explicitly (not left
# to the default) and printed with the flags: the WAL appended through a memory mapping.
TALUS_ENGINE = ["--wal_mmap_writes=true"]

LINE = re.compile(r"^(\w+)\s+:\s+([0-9.]+) micros/op (\d+) ops/sec")
MBS = re.compile(r"([0-9.]+) MB/s")
FOUND = re.compile(r"\((\d+) of (\d+) found\)")
PCT = re.compile(r"^Percentiles: P50: ([0-9.]+) P75: [0-9.]+ P99: ([0-9.]+) P99\.9: ([0-9.]+) "
                 r"P99\.99: ([0-9.]+)")
MAX = re.compile(r"^Min: \S+\s+Median: \S+\s+Max: ([0-9.]+)")
STALL = re.compile(r"^Cumulative stall: \S+ H:M:S, ([0-9.]+) percent")

# benchmark.sh's summary columns (tools/benchmark.sh), in its order.
TSV_COLS = ["ops_sec", "mb_sec", "lsm_sz", "c_wgb", "w_amp", "usec_op", "p50", "p99", "p99.9",
            "p99.99", "pmax", "stall%", "rss"]

def steps(n, read_threads):
    """(label, benchmarks, extra flags, needs existing db, fresh db, strict found check)"""
    rt = [f"--threads={read_threads}"] if read_threads > 1 else []
    suffix = f"_t{read_threads}" if read_threads > 1 else ""
    s = [
        ("fillseq", "fillseq,waitforcompaction,stats", [], False, True, True),
        ("fillrandom", "fillrandom,waitforcompaction,stats", [], False, True, True),
        ("overwrite", "overwrite,waitforcompaction,stats", [], True, False, True),
        ("readrandom" + suffix, "compact,readrandom", [f"--reads={n // 2}"] + rt, True, False, True),
        ("seekrandom" + suffix, "seekrandom", [f"--reads={n // 10}", "--seek_nexts=10"] + rt,
         True, False, True),
        # The writer's keys land at each engine's own pace, so found counts differ slightly.
        # n reads, not fewer: RocksDB's db_bench times a step from the threads' start to when
        # the merged Stats is made, after every thread is joined (its constructor sets start and
        # finish to "now"; Merge keeps the earliest start and latest finish), so the span ends
        # when the rate-limited writer notices the readers are done, which it does only when
        # its rate limiter wakes it, every 100 ms: the step's time is quantized to 100 ms (Talus's
        # db_bench does the same). With n // 5 reads the step took 0.4-0.9 s and the ratio moved
        # in steps of 11-25%; with n, 2-5 s and steps of 2-5%.
        ("readwhilewriting" + suffix, "readwhilewriting",
         [f"--reads={n}", "--benchmark_write_rate_limit=2000000"] + rt, True, False, False),
    ]
    if read_threads == 1:
        s.append(("readrandom_t2", "readrandom", [f"--reads={n // 2}", "--threads=2"], True, False,
                  True))
    # Two writers on a fresh database (each writes n keys, as both db_bench's do).
    s.append(("fillrandom_t2", "fillrandom,waitforcompaction,stats", ["--threads=2"], False, True,
              True))
    return s


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def command(a, engine, n, db, benchmarks, extra, existing, common):
    if engine == "rocksdb_bench":
        args = [a.rocksdb_db_bench]
    elif engine == "talus_native":
        args = [a.binary_native, "db_bench", "--engine=talus"]
    else:
        args = [a.binary, "db_bench", f"--engine={engine}"]
    args += [f"--num={n}", f"--db={db}", f"--seed={a.seed}"] + common + extra
    if engine.startswith("talus") and a.suite == "explicit":
        args += TALUS_ENGINE
    args += [f"--benchmarks={benchmarks}", f"--use_existing_db={1 if existing else 0}"]
    if engine == "rocksdb_bench":
        args = [x for x in args if not x.startswith(TALUS_ONLY)]
    return args


def settle(pause):
    subprocess.run(["sync"], check=False)
    time.sleep(pause)


def warm(db):
    """Puts every file of `db` in the page cache in the same shape for every engine: written back
    (`sync`), dropped (`posix_fadvise(DONTNEED)`), then read once sequentially. Reading alone was
    not enough: this machine reclaims page cache on its own (a table file written 20 seconds
    earlier had lost 1% of its pages), and pages that stay cached keep the folio size they were
    cached with (small when written or read a block at a time, large when read ahead), so a read
    step's kernel time per `pread` (the page-cache lookup: `xas_load`, `filemap_get_read_batch`)
    depended on each database's history, not on the engine (issue 18: readrandom through a 64 MiB
    block cache: 12% of Talus's samples there against 4% for RocksDB's db_bench; 5% for both
    after this)."""
    subprocess.run(["sync"], check=False)
    for root, _, files in os.walk(db):
        for f in files:
            try:
                fd = os.open(os.path.join(root, f), os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                while os.read(fd, 1 << 20):
                    pass
            except OSError:
                pass
            finally:
                os.close(fd)


def run_step(a, engine, n, db, label, benchmarks, extra, existing, common):
    if engine == "memory" and existing:
        benchmarks = "fillrandom," + benchmarks
        existing = False
    args = command(a, engine, n, db, benchmarks, extra, existing, common)
    if existing:
        warm(db)
    settle(a.pause)
    # The process's CPU seconds (user + system, every thread: the step, its flushes and
    # compactions, and the open and the other benchmarks of the command): the work done, which a
    # shared host's stolen time does not inflate as it does the wall time.
    timed = ["/usr/bin/time", "-f", "MAXRSS_KB=%M CPU_S=%U+%S"] + args
    if a.nice:
        # On a shared machine, run the measured process ahead of other work (builds, tests):
        # nice -19 gets ~70x the CPU share of a nice-0 task on the same core.
        timed = ["nice", "-n", "-19"] + timed
    p = subprocess.run(timed, capture_output=True, text=True)
    out = p.stdout + p.stderr
    if p.returncode != 0:
        sys.exit(f"step {label} on {engine} failed ({' '.join(args)}):\n{out}")
    skip = ("stats", "compact", "flush", "waitforcompaction")
    want = [b for b in benchmarks.split(",") if b not in skip][-1]
    result = pct = pmax = found = None
    seen_want = False
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            seen_want = m.group(1) == want
            if seen_want:
                mb = MBS.search(line)
                f = FOUND.search(line)
                found = (int(f.group(1)), int(f.group(2))) if f else None
                result = (float(m.group(2)), int(m.group(3)), float(mb.group(1)) if mb else None)
            continue
        # The histogram printed right after the step's own result line (the first one: a
        # readwhilewriting's reader histogram precedes its writer's).
        if seen_want and pct is None and PCT.match(line):
            pct = [float(x) for x in PCT.match(line).groups()]
        if seen_want and pmax is None and MAX.match(line):
            pmax = float(MAX.match(line).group(1))
    if result is None:
        sys.exit(f"step {label} on {engine}: no result line for {want}:\n{out}")
    wamp = c_wgb = stall = wamp_col = wgb_col = None
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
    cpu = re.search(r"CPU_S=([\d.]+)\+([\d.]+)", out)
    res = {"usec_op": result[0], "ops_sec": result[1], "mb_sec": result[2], "w_amp": wamp,
           "c_wgb": c_wgb, "stall%": stall, "rss_kb": rss, "pmax": pmax, "found": found,
           "cpu_s": float(cpu.group(1)) + float(cpu.group(2)) if cpu else None,
           "sys_s": float(cpu.group(2)) if cpu else None,
           "db_bytes": du(db) if engine != "memory" and os.path.isdir(db) else None,
           "header": header_lines(out)}
    for k, v in zip(["p50", "p99", "p99.9", "p99.99"], pct or [None] * 4):
        res[k] = v
    return res


def rocksdb_build(db_bench):
    """How RocksDB's db_bench was built, from the CMake tree bench/build_rocksdb_tools.sh leaves
    beside its bin/ (db_bench prints only its version): build type, PORTABLE, the optimization and
    target flags, the allocator. None when there is no such tree."""
    build = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(db_bench))), "build")
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            cache = dict(l.split("=", 1) for l in f.read().splitlines() if "=" in l and ":" in l
                         and not l.startswith(("#", "//")))
        with open(os.path.join(build, "CMakeFiles", "rocksdb.dir", "flags.make")) as f:
            cxx = next((l.split("=", 1)[1] for l in f if l.startswith("CXX_FLAGS")), "")
    except OSError:
        return None

    def get(name):
        return next((v for key, v in cache.items() if key.split(":")[0] == name), "?")

    flags = " ".join(x for x in cxx.split() if x.startswith(("-O", "-march", "-flto")))
    jemalloc = "jemalloc" if get("WITH_JEMALLOC") == "ON" else "system allocator"
    return (f"CMake {get('CMAKE_BUILD_TYPE')}, PORTABLE={get('PORTABLE')}, {flags}, {jemalloc} "
            f"({build})")


def header_lines(out):
    keep = ("Talus:", "RocksDB:", "Build:", "Allocator:", "CPU:", "Engine:", "Compression:")
    return [l for l in out.splitlines() if l.startswith(keep)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num", type=int, default=5_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--engines", default="talus,rocksdb_bench")
    ap.add_argument("--binary", default="target/release/talus")
    ap.add_argument("--binary_native", default="target/native/release-lto/talus",
                    help="engine talus_native: Talus built with -C target-cpu=native")
    ap.add_argument("--suite", choices=["explicit", "defaults"], default="explicit")
    ap.add_argument("--key_size", type=int, default=16)
    ap.add_argument("--rocksdb_db_bench", default="/work/rocksdb-tools/bin/db_bench")
    ap.add_argument("--value_size", type=int, default=100)
    ap.add_argument("--read_threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pause", type=float, default=2.0)
    ap.add_argument("--accept_option_diff", default="")
    ap.add_argument("--nice", type=int, default=1 if os.geteuid() == 0 else 0,
                    help="1: run each step under nice -n -19 (needs root; the default as root)")
    ap.add_argument("--only", default="", help="comma-separated step labels to run")
    ap.add_argument("--tsv")
    ap.add_argument("--dir")
    a = ap.parse_args()
    engines = a.engines.split(",")
    if a.suite == "defaults":
        common = DEFAULTS + [f"--key_size={a.key_size}", f"--value_size={a.value_size}"]
    else:
        common = [x if not x.startswith(("--value_size=", "--key_size=")) else x
                  for x in COMMON]
        common = [f"--value_size={a.value_size}" if x.startswith("--value_size=")
                  else f"--key_size={a.key_size}" if x.startswith("--key_size=") else x
                  for x in common]
    base = a.dir or tempfile.mkdtemp(prefix="talus-compare-")
    os.makedirs(base, exist_ok=True)
    suite = steps(a.num, a.read_threads)
    if a.only:
        keep = set(a.only.split(","))
        suite = [s for s in suite if s[0] in keep]
    print(f"compare.py: suite={a.suite} num={a.num} rounds={a.rounds} seed={a.seed} "
          f"engines={','.join(engines)}")
    print(f"load at start: {os.getloadavg()}; nice -19: {bool(a.nice)}")
    print("flags for every engine: " + " ".join(common))
    if "rocksdb_bench" in engines:
        build = rocksdb_build(a.rocksdb_db_bench) or "unknown (no CMake tree)"
        print(f"rocksdb_bench build: {build}")
    if "talus" in engines and a.suite == "explicit":
        print("talus only (no RocksDB option does it): " + " ".join(TALUS_ENGINE))
    options_check(a, engines, base, common, command, refuse=a.suite == "explicit")
    results = {}  # (engine, label) -> list of dicts
    headers = {}
    failures = []
    for r in range(a.rounds):
        order = engines if r % 2 == 0 else list(reversed(engines))
        for label, benchmarks, extra, existing, fresh, strict in suite:
            found = {}
            for e in order:
                db = os.path.join(base, e)
                if fresh and os.path.exists(db):
                    shutil.rmtree(db)
                res = run_step(a, e, a.num, db, label, benchmarks, extra, existing, common)
                headers.setdefault(e, res["header"])
                results.setdefault((e, label), []).append(res)
                found[e] = res["found"]
                f = f" found {res['found'][0]} of {res['found'][1]}" if res["found"] else ""
                print(f"round {r + 1} {label:<20} {e:<14} {res['ops_sec']:>9} ops/sec{f}",
                      file=sys.stderr)
            counts = {e: v for e, v in found.items() if v is not None and e != "memory"}
            if len(set(counts.values())) > 1:
                msg = f"round {r + 1} {label}: found counts differ: {counts}"
                if strict:
                    failures.append(msg)
                print(msg + ("" if strict else " (expected: concurrent writer)"), file=sys.stderr)
    print(f"load at end: {os.getloadavg()}")
    for e, h in headers.items():
        print(f"{e}: " + " | ".join(h))
    report(a, engines, suite, results)
    if not a.dir:
        shutil.rmtree(base, ignore_errors=True)
    if failures:
        print("FAILED: " + "; ".join(failures))
        sys.exit(1)


def report(a, engines, suite, results):
    def vals(e, label, key):
        return [x[key] for x in results.get((e, label), []) if x[key] is not None]

    def med(e, label, key):
        v = vals(e, label, key)
        return statistics.median(v) if v else None

    labels = [s[0] for s in suite]
    hdr = f"{'benchmark':<20}" + "".join(f"{e + ' ops/s med [min-max]':>34}" for e in engines)
    pairs = [(x, y) for i, x in enumerate(engines) for y in engines[i + 1:]]
    hdr += "".join(f"{x[:5] + '/' + y[:13]:>20}" for x, y in pairs)
    print(hdr)
    for label in labels:
        row = f"{label:<20}"
        for e in engines:
            v = vals(e, label, "ops_sec")
            cell = f"{statistics.median(v):,.0f} [{min(v):,.0f}-{max(v):,.0f}]" if v else "-"
            row += f"{cell:>34}"
        for x, y in pairs:
            p, q = med(x, label, "ops_sec"), med(y, label, "ops_sec")
            row += f"{(f'{p / q:.3f}' if p and q else '-'):>20}"
        print(row)
    ratios = {}
    for x, y in pairs:
        rs = [med(x, l, "ops_sec") / med(y, l, "ops_sec") for l in labels
              if med(x, l, "ops_sec") and med(y, l, "ops_sec")]
        if rs:
            g = 1.0
            for r_ in rs:
                g *= r_
            ratios[(x, y)] = g ** (1 / len(rs))
    for (x, y), g in ratios.items():
        print(f"geomean {x}/{y}: {g:.3f}")
    # Each round's ratio of a pair ran back to back (ABBA), so it shares that moment's load; the
    # median of those per-round ratios is steadier on a shared host than a ratio of medians.
    for x, y in pairs:
        row = []
        for l in labels:
            rs = [p["ops_sec"] / q["ops_sec"] for p, q in zip(results.get((x, l), []),
                                                               results.get((y, l), []))]
            if rs:
                row.append(f"{l} {statistics.median(rs):.3f} [{min(rs):.2f}-{max(rs):.2f}]")
        print(f"paired {x}/{y} (median [min-max] of per-round ratios): " + ", ".join(row))
    print()
    cols = [("W-Amp", "w_amp", 1, "{:.2f}"), ("size MB", "db_bytes", 1 << 20, "{:.0f}"),
            ("p99 us", "p99", 1, "{:.1f}"), ("p99.99 us", "p99.99", 1, "{:.0f}"),
            ("pmax us", "pmax", 1, "{:.0f}"), ("RSS MB", "rss_kb", 1024, "{:.0f}"),
            ("proc CPU s", "cpu_s", 1, "{:.2f}"), ("sys CPU s", "sys_s", 1, "{:.2f}"),
            ("stall%", "stall%", 1, "{:.1f}")]
    print(f"{'benchmark':<20}" + "".join(f"{c[0] + ' ' + '/'.join(e[:5] for e in engines):>28}"
                                         for c in cols))
    for label in labels:
        row = f"{label:<20}"
        for _, key, scale, fmt in cols:
            cell = "/".join(fmt.format(med(e, label, key) / scale) if med(e, label, key)
                            is not None else "-" for e in engines)
            row += f"{cell:>28}"
        print(row)
    if a.tsv:
        key_of = {"lsm_sz": "db_bytes", "rss": "rss_kb"}
        tsv = ["engine\tbenchmark\t" + "\t".join(TSV_COLS)]
        for label in labels:
            for e in engines:
                out = []
                for c in TSV_COLS:
                    x = med(e, label, key_of.get(c, c))
                    if c == "lsm_sz" and x is not None:
                        x = f"{x / (1 << 30):.3f}GB"
                    elif c == "rss" and x is not None:
                        x = f"{x / (1 << 20):.2f}"  # GB, as benchmark.sh's rss column
                    out.append("" if x is None else str(x))
                tsv.append(f"{e}\t{label}\t" + "\t".join(out))
        with open(a.tsv, "w") as f:
            f.write("\n".join(tsv) + "\n")


if __name__ == "__main__":
    main()
