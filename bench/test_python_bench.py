"""Unit tests of bench/python_bench_child.py's data: orders are permutations, the pool and the
values are fixed, and the Rust loop (crates/engine/examples/python_bench_ops.rs) builds the same
keys and values (checked when its release binary exists: `cargo test --workspace --release`
builds it)."""

import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_bench_child as child  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fnv1a(chunks):
    h = 0xCBF29CE484222325
    for c in chunks:
        for b in c:
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


class DataTest(unittest.TestCase):
    def test_orders_are_permutations(self):
        for n in [1, 2, 100, 1000, 4096]:
            for seed in [1, 7]:
                for phase in [1, 2, 3, 4]:
                    self.assertEqual(sorted(child.order(n, seed, phase)), list(range(n)))
        self.assertNotEqual(child.order(1000, 1, 1), child.order(1000, 1, 3))

    def test_values(self):
        pl = child.pool()
        self.assertEqual(len(pl), child.POOL)
        self.assertEqual(pl, child.pool())
        keys, values = child.phase_data("put", 500, 1, pl)
        self.assertEqual(len(keys), 500)
        self.assertTrue(all(len(k) == 16 for k in keys))
        self.assertTrue(all(len(v) == child.VALUE and v.endswith(bytes(50)) for v in values))
        self.assertEqual(len(set(values)), 500)
        self.assertIsNone(child.phase_data("get", 10, 1, pl)[1])

    def test_rust_loop_builds_the_same_data(self):
        exe = os.path.join(ROOT, "target", "release", "examples", "python_bench_ops")
        if not os.path.exists(exe):
            self.skipTest("no release build of the Rust loop")
        out = subprocess.run([exe, "--num=1000", "--seed=3", "--digest"], check=True,
                             capture_output=True, text=True).stdout
        pl = child.pool()
        for line in out.splitlines():
            row = json.loads(line)
            keys, values = child.phase_data(row["phase"], 1000, 3, pl)
            self.assertEqual(f"{fnv1a(keys + (values or [])):016x}", row["digest"], row["phase"])


if __name__ == "__main__":
    unittest.main()
