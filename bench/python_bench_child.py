#!/usr/bin/env python3
"""One engine, one fresh database, the phases of bench/python_bench.py: run by it in a child
process per (round, engine), printing one JSON line per phase.

usage: bench/python_bench_child.py --engine E --db DIR --num N --seed S
                                   [--phases put,batch100,flush,get,multi_get,iterate]
                                   [--pregen] [--no_close] [--no_gc]

The data is a function of (num, seed) only, the same for every engine and for the Rust loop
(crates/engine/examples/python_bench_ops.rs computes it the same way):
  key(i)         b"%016d" % i (16 bytes)
  value(i, ver)  100 bytes: 50 cut from a fixed pseudo-random pool at (37 i + 101 ver) mod
                 (2^20 - 100), then 50 zero bytes (compresses to about half, as db_bench's)
  order(phase)   the permutation j -> (a j + b) mod num, a and b from (num, seed, phase)
Phases: put (num puts of version 0, order 1), batch100 (num overwrites of version 1 in batches
of 100, order 2), flush (where the engine has one), get (num gets, order 3), multi_get (num keys
in groups of 100, order 4), iterate (a full forward scan). Each phase's data is built before
its clock starts. Printed per phase: calls, keys, wall seconds, process CPU seconds (getrusage,
every thread: background flushes and compactions count where they run) and the calling
thread's CPU seconds.

Engines: talus (this checkout's package), rocksdict (RocksDB), plyvel (LevelDB), lmdb, and
noop (the same Python loops calling C no-ops: the interpreter's share of a call). Options are
set alike where the knob exists: 64 MiB write buffer, LZ4 (LevelDB: Snappy, its only one),
10-bit bloom filters, a 32 MiB block cache, 2 background jobs; WAL on and no fsync per write
(LMDB: sync=False). LMDB reads one read transaction per phase and commits one write
transaction per put (per batch in batch100).
"""
import argparse
import json
import operator
import os
import resource
import sys
import time

POOL = 1 << 20
VALUE = 100
GROUP = 100
PHASES = ["put", "batch100", "flush", "get", "multi_get", "iterate"]


def pool():
    x, out, mask = 0x9E3779B97F4A7C15, bytearray(), (1 << 64) - 1
    while len(out) < POOL:
        x ^= (x << 13) & mask
        x ^= x >> 7
        x ^= (x << 17) & mask
        out += x.to_bytes(8, "little")
    return bytes(out[:POOL])


def order(n, seed, phase):
    from math import gcd
    a = max((n * 618034 // 1000000 + seed * 7 + phase * 13) % max(n, 1), 1)
    while gcd(a, n) != 1:
        a += 1
    b = (seed * 7919 + phase * 104729) % max(n, 1)
    return [(a * j + b) % n for j in range(n)]


def phase_data(phase, n, seed, pl):
    """(keys, values) of a phase, in its order (values None where the phase writes none)."""
    spec = {"put": (1, 0), "batch100": (2, 1), "get": (3, None), "multi_get": (4, None)}
    if phase not in spec:
        return None, None
    idx, ver = spec[phase]
    ords = order(n, seed, idx)
    keys = [b"%016d" % i for i in ords]
    if ver is None:
        return keys, None
    zeros = bytes(VALUE - VALUE // 2)
    span = POOL - VALUE
    values = [pl[o:o + VALUE // 2] + zeros
              for o in ((i * 37 + ver * 101) % span for i in ords)]
    return keys, values


def groups(keys):
    return [keys[i:i + GROUP] for i in range(0, len(keys), GROUP)]


class Talus:
    name = "talus"

    def __init__(self, path):
        import talus
        self.db = talus.DB(path, write_buffer_size=64 << 20, compression="kLZ4Compression",
                           bloom_bits=10, cache_size=32 << 20, max_background_jobs=2)
        self.put, self.get, self.multi_get = self.db.put, self.db.get, self.db.multi_get

    def batch(self, keys, values):
        with self.db.write_batch() as b:
            put = b.put
            for k, v in zip(keys, values):
                put(k, v)

    def flush(self):
        self.db.flush()

    def iterate(self):
        n = 0
        for _ in self.db.items():
            n += 1
        return n

    def close(self):
        self.db.close()


class RocksDict:
    name = "rocksdict"

    def __init__(self, path):
        import rocksdict as r
        self.r = r
        o = r.Options(raw_mode=True)
        o.create_if_missing(True)
        o.set_write_buffer_size(64 << 20)
        o.set_compression_type(r.DBCompressionType.lz4())
        o.set_max_background_jobs(2)
        t = r.BlockBasedOptions()
        t.set_bloom_filter(10, False)
        t.set_block_cache(r.Cache(32 << 20))
        o.set_block_based_table_factory(t)
        self.db = r.Rdict(path, o)
        self.put, self.get = self.db.put, self.db.get
        self.multi_get = self.db.get  # a list of keys is RocksDB's MultiGet

    def batch(self, keys, values):
        b = self.r.WriteBatch(raw_mode=True)
        put = b.put
        for k, v in zip(keys, values):
            put(k, v)
        self.db.write(b)

    def flush(self):
        self.db.flush()

    def iterate(self):
        n = 0
        for _ in self.db.items():
            n += 1
        return n

    def close(self):
        self.db.close()


class Plyvel:
    name = "plyvel"

    def __init__(self, path):
        import plyvel
        self.db = plyvel.DB(path, create_if_missing=True, write_buffer_size=64 << 20,
                            bloom_filter_bits=10, lru_cache_size=32 << 20, compression="snappy")
        self.put, self.get = self.db.put, self.db.get

    def multi_get(self, keys):  # LevelDB has no MultiGet: a loop
        get = self.db.get
        return [get(k) for k in keys]

    def batch(self, keys, values):
        with self.db.write_batch() as b:
            put = b.put
            for k, v in zip(keys, values):
                put(k, v)

    def flush(self):
        self.db.compact_range()  # LevelDB has no flush; its compaction writes the memtable

    def iterate(self):
        n = 0
        for _ in self.db:
            n += 1
        return n

    def close(self):
        self.db.close()


class Lmdb:
    name = "lmdb"

    def __init__(self, path):
        import lmdb
        self.env = lmdb.open(path, map_size=64 << 30, sync=False, metasync=False,
                             writemap=False, max_dbs=0)
        self.rtxn = None

    def put(self, k, v):
        with self.env.begin(write=True) as t:
            t.put(k, v)

    def _reader(self):
        if self.rtxn is None:
            self.rtxn = self.env.begin()
        return self.rtxn

    def get(self, k):
        return self._reader().get(k)

    def multi_get(self, keys):
        return self._reader().cursor().getmulti(keys)

    def batch(self, keys, values):
        with self.env.begin(write=True) as t:
            put = t.put
            for k, v in zip(keys, values):
                put(k, v)

    def flush(self):
        self.env.sync()

    def iterate(self):
        n = 0
        with self.env.begin() as t:
            for _ in t.cursor():
                n += 1
        return n

    def end_phase(self):
        if self.rtxn is not None:
            self.rtxn.abort()
            self.rtxn = None

    def close(self):
        self.end_phase()
        self.env.close()


class Noop:
    """The loops with C no-ops in place of the engine: what the interpreter costs per call."""
    name = "noop"

    def __init__(self, path):
        self.put = operator.is_
        self.get = len
        self.multi_get = len
        self.items = None

    def batch(self, keys, values):
        put = operator.is_
        for k, v in zip(keys, values):
            put(k, v)

    def flush(self):
        pass

    def iterate(self):
        n = 0
        for _ in self.items:
            n += 1
        return n

    def close(self):
        pass


ENGINES = {e.name: e for e in [Talus, RocksDict, Plyvel, Lmdb, Noop]}


def run_phase(eng, phase, keys, values):
    """Runs `phase`; returns (calls, keys)."""
    if phase == "put":
        put = eng.put
        for k, v in zip(keys, values):
            put(k, v)
        return len(keys), len(keys)
    if phase == "batch100":
        batch = eng.batch
        for i in range(0, len(keys), GROUP):
            batch(keys[i:i + GROUP], values[i:i + GROUP])
        return (len(keys) + GROUP - 1) // GROUP, len(keys)
    if phase == "flush":
        eng.flush()
        return 1, 0
    if phase == "get":
        get = eng.get
        for k in keys:
            get(k)
        return len(keys), len(keys)
    if phase == "multi_get":
        mg = eng.multi_get
        gs = groups(keys)
        for g in gs:
            mg(g)
        return len(gs), len(keys)
    if phase == "iterate":
        n = eng.iterate()
        return n, n
    raise SystemExit(f"unknown phase {phase}")


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", required=True, choices=sorted(ENGINES))
    ap.add_argument("--db", required=True)
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--phases", default=",".join(PHASES))
    ap.add_argument("--pregen", action="store_true", help="build every phase's data first")
    ap.add_argument("--no_close", action="store_true", help="exit without closing")
    ap.add_argument("--no_gc", action="store_true", help="no cyclic GC (steadier counts)")
    a = ap.parse_args()
    if a.no_gc:
        import gc
        gc.disable()
    phases = [p for p in a.phases.split(",") if p]
    pl = pool()
    pre = {p: phase_data(p, a.num, a.seed, pl) for p in PHASES} if a.pregen else {}
    eng = ENGINES[a.engine](a.db)
    if a.engine == "noop":
        eng.items = [(b"k", b"v")] * a.num
    for phase in phases:
        keys, values = pre.pop(phase, None) or phase_data(phase, a.num, a.seed, pl)
        w0, p0, t0 = time.perf_counter(), cpu(), time.thread_time()
        calls, nkeys = run_phase(eng, phase, keys, values)
        w1, p1, t1 = time.perf_counter(), cpu(), time.thread_time()
        if hasattr(eng, "end_phase"):
            eng.end_phase()
        print(json.dumps({"phase": phase, "ops": calls, "keys": nkeys, "wall_s": w1 - w0,
                          "proc_cpu_s": p1 - p0, "thread_cpu_s": t1 - t0}), flush=True)
    if a.no_close:
        sys.stdout.flush()
        os._exit(0)
    eng.close()


if __name__ == "__main__":
    main()
