"""The suites bench/regress.py runs: each a list of steps, one `talus` process per step.

A `Step` is a microbenchmark (its `group` is `point`, `range` or `write`, the groups of post 004's
summary) or a setup step (`group=None`: run, not reported). Steps run in order on one database
per variant; `fresh` steps start from an empty one. `argv(binary, db, scale)` gives the command:
`scale` < 1 shrinks the step's operation count (not its key space) for the short run that
instruction counting subtracts (see regress.py). `parse(output)` returns `(ops, ops_per_sec)` of
the step's own result, or None.

Suites:
- `cached`: the db_bench suite "cached" of bench/compare.py (16-byte keys, 100-byte values, lz4,
  1 GiB LRU cache, bloom 10, WAL on, sync off, one thread unless named `_t2`), with compare.py's
  compaction before the reads as its own setup process (so compaction CPU is not charged to
  readrandom), plus readseq, seekrandom over 100 keys and multireadrandom; with `--sysbench`,
  then the `sysbench` suite's steps.
- `sysbench`: post 004's sysbench microbenchmarks alone (`SYSBENCH`: reads as `.pre`, writes,
  reads again), each a fixed number of events on a table of --num/10 rows, so instruction
  counts are deterministic. The steps come from the variant's binary (`sysbench_plugin`): one
  without the tool or without `--events` is "not applicable" (listed, not counted); one with
  the tool but none of the tests is an error naming the tests looked for.
- `ibench`: the insert benchmark (`talus ibench`, one client): the PK-order load, and inserts
  with 0 and with 3 secondary indexes maintained (post 003's ratio), each on a fresh database;
  the steps come from the variant's binary (`ibench_plugin`): one without the tool or its
  `--secondary_indexes` is "not applicable". `--ibench` appends them to `cached`.
- `cache`: the allocator study: readrandom (--num/8 reads) on one compacted database of --num
  keys with the LRU and the hyper clock cache at 1, 8, 64 MiB and 1 GiB (groups `lru` and
  `clock`), for peak RSS and VSZ. Builds of one commit share the database (SHARED_DB).

Adding a suite: a function `name(num) -> [Step]` and an entry in SUITES.
"""
import re
import subprocess
from dataclasses import dataclass
from typing import Callable

COMMON = ["--key_size=16", "--value_size=100", "--compression_type=lz4", "--bloom_bits=10",
          "--seed=1"]
CACHE_1G = "--cache_size=1073741824"
RESULT = re.compile(r"^(\w+)\s+:\s+([0-9.]+) micros/op (\d+) ops/sec\s+\S+ seconds\s+(\d+) "
                    r"operations;", re.M)


@dataclass
class Step:
    name: str
    group: str | None
    argv: Callable
    parse: Callable
    fresh: bool = False
    db: str = "db"          # database dir name under the variant's run dir
    # A process that brings an existing database to a clean state (WAL flushed) before a
    # counted run, so the run does not pay for what an earlier process left behind.
    settle: Callable | None = None
    # False where the work per operation depends on timing (a rate-limited writer beside the
    # readers): its instruction count would differ run to run, so it is not counted.
    countable: bool = True


def db_bench_result(bench):
    """Parser of the result line of benchmark `bench`: (operations, ops/sec)."""
    def parse(out):
        found = [m for m in RESULT.finditer(out) if m.group(1) == bench]
        if not found:
            return None
        m = found[-1]
        return int(m.group(4)), float(m.group(3))
    return parse


def db_bench_step(name, group, benchmarks, num, extra=(), ops_flag=None, ops=None, fresh=False,
                  cache=CACHE_1G):
    """A db_bench process running `benchmarks`; the last one is measured. `ops_flag` (`--reads`
    or `--writes`) is the flag scaled for the short counting run, `ops` its full value."""
    existing = 0 if fresh else 1

    def argv(binary, db, scale=1.0):
        a = [binary, "db_bench", f"--num={num}", f"--db={db}", *COMMON, cache, *extra,
             f"--benchmarks={benchmarks}", f"--use_existing_db={existing}"]
        if ops_flag:
            n = ops if scale == 1.0 else max(1, int(ops * scale))
            if scale != 1.0 or ops != num:
                a.append(f"{ops_flag}={n}")
        return a
    def settle(binary, db):
        return [binary, "db_bench", f"--num={num}", f"--db={db}", *COMMON, cache,
                "--benchmarks=flush", "--use_existing_db=1"]
    last = [b for b in benchmarks.split(",") if b not in ("stats", "compact", "flush")]
    return Step(name, group, argv, db_bench_result(last[-1]) if last else (lambda out: None),
                fresh, settle=None if fresh else settle)


def cached(num):
    n = num
    rww = db_bench_step("readwhilewriting", "point", "readwhilewriting", n,
                        ["--benchmark_write_rate_limit=2000000"], ops_flag="--reads", ops=n // 5)
    rww.countable = False
    return [
        db_bench_step("fillseq", "write", "fillseq", n, ops_flag="--writes", ops=n, fresh=True),
        db_bench_step("fillrandom", "write", "fillrandom", n, ops_flag="--writes", ops=n,
                      fresh=True),
        db_bench_step("overwrite", "write", "overwrite", n, ops_flag="--writes", ops=n),
        db_bench_step("compact", None, "compact", n),
        db_bench_step("readrandom", "point", "readrandom", n, ops_flag="--reads", ops=n // 2),
        db_bench_step("multireadrandom", "point", "multireadrandom", n, ["--batch_size=32"],
                      ops_flag="--reads", ops=n // 2),
        db_bench_step("readrandom_t2", "point", "readrandom", n, ["--threads=2"],
                      ops_flag="--reads", ops=n // 4),
        db_bench_step("seekrandom", "range", "seekrandom", n, ["--seek_nexts=10"],
                      ops_flag="--reads", ops=n // 10),
        db_bench_step("seekrandom_100", "range", "seekrandom", n, ["--seek_nexts=100"],
                      ops_flag="--reads", ops=n // 50),
        db_bench_step("readseq", "range", "readseq", n, ops_flag="--reads", ops=n),
        # Last: it writes, so the reads above all see the same compacted database.
        rww,
    ]


CACHE_SIZES = [("1M", 1 << 20), ("8M", 8 << 20), ("64M", 64 << 20), ("1G", 1 << 30)]


def cache(num):
    steps = [db_bench_step("load", None, "fillrandom,compact", num, fresh=True)]
    for ctype, group in (("lru_cache", "lru"), ("hyper_clock_cache", "clock")):
        for label, size in CACHE_SIZES:
            steps.append(db_bench_step(f"readrandom_{group}_{label}", group, "readrandom", num,
                                       [f"--cache_type={ctype}"], ops_flag="--reads",
                                       ops=num // 8, cache=f"--cache_size={size}"))
    return steps


# sysbench's microbenchmarks by post 004's names and groups, in its order: the point and range
# tests first (as `NAME.pre`), then the write tests, then the point and range tests again.
# Written against `talus sysbench`'s command line (`[options] TEST run`, fixed work with
# `--time=0 --events=N`, final `transactions: N (X per sec.)`); each test's events are
# `--num`/20 divided by its weight (a range of 1000 rows costs more than a point query).
SYSBENCH_READS = [
    ("point-query", "point", 1), ("random-points-pk", "point", 2),
    ("random-points-si", "point", 2), ("hot-points", "point", 2),
    ("points-covered-pk", "point", 2), ("points-covered-si", "point", 2),
    ("points-notcovered-pk", "point", 2), ("points-notcovered-si", "point", 2),
    ("range-covered-pk.range100", "range", 4), ("range-pk.range100", "range", 4),
    ("range-covered-si.range100", "range", 4), ("range-notcovered-si.range100", "range", 8),
    ("scan", "range", 0), ("read-only", "range", 8),
]
SYSBENCH_WRITES = [
    ("update-index", "write", 1), ("update-nonindex", "write", 1),
    ("update-inlist", "write", 4), ("update-one", "write", 1), ("update-zipf", "write", 1),
    ("write-only", "write", 2), ("read-write", "write", 8), ("insert", "write", 1),
    ("delete", "write", 1),
]
SYSBENCH = ([(f"{t}.pre", g, w) for t, g, w in SYSBENCH_READS] + SYSBENCH_WRITES
            + SYSBENCH_READS)
SB_TXN = re.compile(r"^\s*transactions:\s+(\d+)\s+\(([0-9.]+) per sec\.\)", re.M)


class PluginError(Exception):
    """The plugin found the tool but none of the tests it looks for: never an empty suite."""


def tool_help(binary, tool):
    """`talus TOOL --help`'s text, or None where the binary has no such tool."""
    try:
        p = subprocess.run([binary, tool, "--help"], capture_output=True, text=True,
                           timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout + p.stderr if p.returncode == 0 else None


def sysbench_test_names(help_text):
    """The test names `talus sysbench --help` lists (`  name (alias)` lines after `tests:`)."""
    names = set()
    if "tests:" not in help_text:
        return names
    for line in help_text.split("tests:", 1)[1].splitlines():
        m = re.match(r"^  ([a-z][a-z0-9._-]*)(\s|$)", line)
        if m:
            names.add(m.group(1))
    return names


def sysbench_plugin(binary, num):
    """`(steps, why_not)`: the sysbench steps for `binary`, and why none or some are left out.
    A binary without `talus sysbench`, or whose sysbench has no fixed-work mode (`--events`),
    is not applicable (a revision too old for the experiment, listed, never counted). One that
    has both but none of the tests raises PluginError naming what was looked for."""
    text = tool_help(binary, "sysbench")
    if text is None:
        return [], "the binary has no `talus sysbench`"
    if "--events" not in text:
        return [], "its `talus sysbench` has no --events (fixed-work mode)"
    names = sysbench_test_names(text)
    have = [(t, g, w) for t, g, w in SYSBENCH
            if t in names or t.endswith(".pre") and t[:-4] in names and ".pre" in text]
    if not have:
        raise PluginError(
            f"{binary} sysbench --help names none of the tests looked for: "
            + ", ".join(t for t, _, _ in SYSBENCH if not t.endswith(".pre"))
            + f" (it lists: {', '.join(sorted(names)) or 'nothing'})")
    missing = sorted({t for t, _, _ in SYSBENCH} - {t for t, _, _ in have})
    commands = ("flush",) if "flush" in text.split("tests:", 1)[0] else ()
    return sysbench_steps(num, have, commands), (f"tests not in this binary: {', '.join(missing)}"
                                       if missing else None)


def sysbench_steps(num, tests, commands=("flush",)):
    """A `prepare` step (fresh database) and one step per `(test, group, weight)` of `tests`;
    where the binary has `talus sysbench flush` (`commands`), each step's database is flushed
    first by its own process, so no counted run replays the log an earlier process left."""
    size = max(1000, num // 10)
    events = max(100, num // 20)
    common = ["--engine=talus", "--tables=1", f"--table_size={size}", "--threads=1",
              "--rand_seed=1", "--time=0"]

    def n_events(weight, scale):
        # scan reads the whole table per event: a few events, whatever --num.
        n = max(4, events * 50 // size) if weight == 0 else max(10, events // weight)
        return n if scale == 1.0 else max(1, int(n * scale))

    def parse(out):
        m = SB_TXN.findall(out)
        return (int(m[-1][0]), float(m[-1][1])) if m else None

    def settle(binary, db):
        # The previous process's log replayed by neither the short nor the full counted run.
        return [binary, "sysbench", f"--db={db}", *common, "flush"]

    def step(test, group, weight):
        def argv(binary, db, scale=1.0):
            a = [binary, "sysbench", f"--db={db}", *common]
            if group is None:
                return a + ["prepare"]
            return a + [f"--events={n_events(weight, scale)}", test, "run"]
        return Step(f"sb_{test}" if group else "sb_prepare", group, argv, parse,
                    fresh=group is None, db="sysbench",
                    settle=settle if "flush" in commands else None)

    return [step("prepare", None, 0)] + [step(t, g, w) for t, g, w in tests]


def sysbench(num):
    """The sysbench suite: its steps come from the binary (`sysbench_plugin`, in regress.py)."""
    return []


# The insert benchmark (post 003's workload, `talus ibench`): one client, fixed work. Each step
# is its own fresh database and process: `l.i0` loads in PK order; the two `l.i1` steps load
# half as many rows, then insert more with 0 or 3 secondary indexes maintained. Only the
# measured step's row count (`ops_flag`) is scaled for the short counting run, so the load and
# the index build cancel out of instructions per insert. `--interval` is long so the per-second
# sampler's work does not vary with the run's speed.
IBENCH_STEPS = [
    # name, the ibench step measured, --steps, --secondary_indexes, the scaled flag
    ("ib_l.i0", "l.i0", "l.i0", 0, "--num"),
    ("ib_l.i1_0idx", "l.i1", "l.i0,l.i1", 0, "--num_i1"),
    ("ib_l.i1_3idx", "l.i1", "l.i0,l.x,l.i1", 3, "--num_i1"),
]
IB_SUMMARY = re.compile(r"^summary (\S+) engine=\S+ secs=\S+ rows=(\d+) .*? ips=([0-9.]+) ", re.M)


def ibench_steps(num):
    """The ibench steps (`IBENCH_STEPS`) at --num rows loaded by `l.i0`; the `l.i1` steps load
    --num/2 rows, then insert --num/4."""
    common = ["--engine=talus", "--clients=1", "--seed=1", "--interval=3600"]

    def step(name, measured, steps, indexes, flag):
        full = {"--num": num, "--num_i1": max(100, num // 4)}

        def argv(binary, db, scale=1.0):
            sizes = {"--num": num if flag == "--num" else max(100, num // 2),
                     "--num_i1": full["--num_i1"]}
            sizes[flag] = full[flag] if scale == 1.0 else max(1, int(full[flag] * scale))
            return [binary, "ibench", f"--db={db}", *common, f"--steps={steps}",
                    f"--secondary_indexes={indexes}", *(f"{k}={v}" for k, v in sizes.items())]

        def parse(out):
            found = [m for m in IB_SUMMARY.finditer(out) if m.group(1) == measured]
            return (int(found[-1].group(2)), float(found[-1].group(3))) if found else None
        return Step(name, "write", argv, parse, fresh=True, db="ibench")

    return [step(*s) for s in IBENCH_STEPS]


def ibench_plugin(binary, num):
    """`(steps, why_not)`: the ibench steps, or none and why where the binary's `talus ibench`
    is missing or too old for them (no `--secondary_indexes` or `--num_i1`): not applicable,
    listed, never counted."""
    text = tool_help(binary, "ibench")
    if text is None or "--num_i1" not in text:
        return [], "the binary has no `talus ibench`"
    if "--secondary_indexes" not in text:
        return [], "its `talus ibench` has no --secondary_indexes"
    return ibench_steps(num), None


def ibench(num):
    """The ibench suite: its steps come from the binary (`ibench_plugin`, in regress.py)."""
    return []


SUITES = {"cached": cached, "cache": cache, "sysbench": sysbench, "ibench": ibench}
# Suites whose measured steps only read: variants built from one commit share one database.
SHARED_DB = {"cache"}
