#!/usr/bin/env python3
"""Point reads with direct IO and a block cache 1/10 of the data: `talus db_bench` beside
RocksDB 10.4.2's own release db_bench (issue 13).

usage: bench/io_bound_db_bench.py [--talus BIN] [--rocksdb BIN] [--harness BIN] [--dir DIR] [--num N]
                                  [--duration S] [--variants partitioned,unpartitioned]

For each variant (partitioned: --partition_index_and_filters=1; unpartitioned: one index and one
filter block per table, both in the block cache) and each engine, one process fills a database
(filluniquerandom, then waitforcompaction) with direct IO for flush and compaction. The block
cache is then set to 1/10 of the larger of the two databases, and readrandom runs in its own
process per measurement with --use_existing_db=1 --use_direct_reads=1, interleaved RocksDB,
Talus, Talus, RocksDB (ABBA), fixed seed. Every option is passed explicitly to both binaries
(their defaults differ); the common flags are printed. Per run: ops/sec, block reads per get and
KB of blocks read per get (PERF_CONTEXT, --perf_level=2), and the device KB read per get from the
child's rusage (ru_inblock, 512-byte units: the same accounting as /proc/<pid>/io read_bytes; the
process's whole life, so the open is included). Databases are deleted at the end.
"""

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import time

COMMON = [
    "--key_size=16", "--value_size=100", "--compression_type=snappy", "--compression_ratio=0.5",
    "--block_size=4096", "--bloom_bits=10", "--cache_type=lru_cache", "--cache_numshardbits=6",
    "--cache_high_pri_pool_ratio=0.5", "--cache_index_and_filter_blocks=1",
    "--pin_top_level_index_and_filter=1", "--pin_l0_filter_and_index_blocks_in_cache=0",
    "--metadata_block_size=4096", "--use_direct_io_for_flush_and_compaction=1",
    "--compaction_readahead_size=2097152", "--write_buffer_size=67108864",
    "--max_write_buffer_number=2", "--target_file_size_base=67108864",
    "--max_bytes_for_level_base=268435456", "--max_bytes_for_level_multiplier=10",
    "--level_compaction_dynamic_level_bytes=1", "--level0_file_num_compaction_trigger=4",
    "--level0_slowdown_writes_trigger=20", "--level0_stop_writes_trigger=36",
    "--max_background_jobs=2", "--num_levels=7", "--compaction_style=0", "--subcompactions=1",
    "--open_files=-1", "--verify_checksum=1", "--threads=1", "--seed=1", "--perf_level=2",
    "--histogram=0", "--statistics=0", "--disable_wal=0", "--sync=0", "--wal_bytes_per_sync=0",
]
VARIANTS = {
    "partitioned": ["--partition_index_and_filters=1"],
    "unpartitioned": ["--partition_index_and_filters=0"],
}
RESULT = re.compile(r"^readrandom\s+:\s+([0-9.]+) micros/op (\d+) ops/sec.*?\((\d+) of (\d+) found\)")


def run(binary, args, log):
    """Runs a db_bench; returns (stdout, bytes read from the device by the child)."""
    t = time.time()
    with open(log, "w") as out:
        out.write(" ".join([binary] + args) + "\n")
        out.flush()
        p = subprocess.Popen([binary] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        text = p.stdout.read().decode(errors="replace")
        _, status, ru = os.wait4(p.pid, 0)
        out.write(text)
    if status != 0:
        sys.exit(f"{binary} failed ({status}); see {log}")
    print(f"  {os.path.basename(log)}: {time.time() - t:.0f} s", file=sys.stderr)
    return text, ru.ru_inblock * 512


def perf(text, name):
    after = text.split("readrandom ", 1)[-1]
    m = re.search(rf"\b{name} = (\d+)", after)
    return int(m.group(1)) if m else 0


def dir_size(d):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--talus", default="target/release/talus")
    ap.add_argument("--rocksdb", default="/work/rocksdb-tools/bin/db_bench")
    ap.add_argument("--dir", default="/work/scratch/io_bound_db_bench")
    ap.add_argument("--num", type=int, default=10_000_000)
    ap.add_argument("--duration", type=int, default=60)
    ap.add_argument("--variants", default="partitioned,unpartitioned")
    ap.add_argument("--harness", help="a talus binary built with --features rocksdb: adds "
                    "`talus db_bench --engine=rocksdb` (RocksDB through the Rust crate) as a "
                    "third engine")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    engines = {"rocksdb": [a.rocksdb], "talus": [a.talus, "db_bench"]}
    order = ["rocksdb", "talus", "talus", "rocksdb"]
    if a.harness:
        engines["harness"] = [a.harness, "db_bench", "--engine=rocksdb"]
        order = ["rocksdb", "talus", "harness", "harness", "talus", "rocksdb"]
    print("common flags: " + " ".join(COMMON + [f"--num={a.num}"]), file=sys.stderr)
    rows = []
    try:
        for variant in a.variants.split(","):
            vflags = VARIANTS[variant]
            sizes = {}
            for e, cmd in engines.items():
                db = os.path.join(a.dir, f"db-{e}-{variant}")
                shutil.rmtree(db, ignore_errors=True)
                fill = ["--benchmarks=filluniquerandom,waitforcompaction,stats", f"--db={db}",
                        f"--num={a.num}", "--use_existing_db=0", "--use_direct_reads=1",
                        "--cache_size=67108864"] + COMMON + vflags
                run(cmd[0], cmd[1:] + fill, os.path.join(a.dir, f"fill-{e}-{variant}.log"))
                sizes[e] = dir_size(db)
            cache = max(sizes.values()) // 10
            print(f"{variant}: db sizes {sizes}, cache {cache}", file=sys.stderr)
            for i, e in enumerate(order):
                cmd = engines[e]
                db = os.path.join(a.dir, f"db-{e}-{variant}")
                read = ["--benchmarks=readrandom", f"--db={db}", f"--num={a.num}",
                        f"--reads={a.num}", f"--duration={a.duration}", "--use_existing_db=1",
                        "--use_direct_reads=1", f"--cache_size={cache}"] + COMMON + vflags
                text, dev = run(cmd[0], cmd[1:] + read,
                                os.path.join(a.dir, f"read-{e}-{variant}-{i}.log"))
                m = next((RESULT.match(l) for l in text.splitlines() if RESULT.match(l)), None)
                if not m:
                    sys.exit(f"no readrandom line from {e}")
                ops = int(m.group(4))
                rows.append((variant, e, i, int(m.group(2)), perf(text, "block_read_count") / ops,
                             perf(text, "block_read_byte") / ops / 1024, dev / ops / 1024,
                             f"{m.group(3)}/{m.group(4)}", sizes[e] >> 20, cache >> 20))
    finally:
        for v in VARIANTS:
            for e in engines:
                shutil.rmtree(os.path.join(a.dir, f"db-{e}-{v}"), ignore_errors=True)
    print("| variant | engine | run | ops/sec | block reads/get | KB read/get (blocks) "
          "| device KB/get (rusage) | found | DB MB | cache MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.3f} | {r[5]:.2f} | {r[6]:.2f} "
              f"| {r[7]} | {r[8]} | {r[9]} |")


if __name__ == "__main__":
    main()
