"""Unit tests of bench/regress.py's parts that need no build and no run:
`python3 -m unittest discover -s bench -p 'test_*.py'` (CI runs it)."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import regress  # noqa: E402
import regress_build  # noqa: E402
import regress_suites  # noqa: E402
import callgrind_layers  # noqa: E402


def fake_talus(d, help_text, rc=0):
    """A `talus` in directory `d` that prints `help_text` and exits with `rc` (a plugin's
    `--help` probe)."""
    path = os.path.join(d, "talus")
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\ncat <<'EOF'\n{help_text}\nEOF\nexit {rc}\n")
    os.chmod(path, 0o755)
    return path


class Variants(unittest.TestCase):
    def test_specs(self):
        vs = regress_build.parse_variants(
            ["main~10:release,new=.:release-lto:jemalloc+x", "@/bin/talus"],
            [".:release::-C target-cpu=native,-Ctarget-feature=+avx2"])
        self.assertEqual([v.label for v in vs][1:3], ["new", "v2"])
        self.assertEqual((vs[0].rev, vs[0].profile, vs[0].features), ("main~10", "release", []))
        self.assertEqual((vs[1].rev, vs[1].profile, vs[1].features),
                         (".", "release-lto", ["jemalloc", "x"]))
        self.assertEqual(vs[2].binary, "/bin/talus")
        self.assertEqual(vs[3].rustflags, "-C target-cpu=native,-Ctarget-feature=+avx2")
        self.assertEqual(vs[3].config_slug(), "release_C-target-cpu-native-Ctarget-feature-+avx2")
        with self.assertRaises(SystemExit):
            regress_build.parse_variants([".:release,.:release"], None)

    def test_profile_settings_and_the_build_study(self):
        (v,) = regress_build.parse_variants(None, ["o2=.:release/opt-level=2/lto=thin::-C x=1"])
        self.assertEqual((v.profile, v.settings, v.rustflags),
                         ("release", [("opt-level", 2), ("lto", "thin")], "-C x=1"))
        self.assertEqual(v.config_slug(), "release_opt-level-2_lto-thin_C-x-1")
        (c,) = regress_build.parse_variants([".:release-lto/codegen-units=16"], None)
        self.assertEqual(c.settings, [("codegen-units", 16)])
        for bad in ["opt-level=4", "lto=maybe", "codegen-units=0", "panic=abort"]:
            with self.assertRaises(SystemExit) as e:
                regress_build.parse_variants(None, [f".:release/{bad}"])
            self.assertIn(bad, str(e.exception))
        study = regress_build.parse_variants(regress_build.BUILD_STUDY, None)
        slugs = [v.config_slug() for v in study]
        self.assertEqual(len(set(slugs)), len(slugs), "each build its own target dir")
        self.assertEqual(study[0].label, "rel")
        self.assertIn(("lto", "fat"), [s for v in study for s in v.settings])

    def test_profile_defined_for_old_trees(self):
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        with tempfile.TemporaryDirectory() as old:
            with open(os.path.join(old, "Cargo.toml"), "w") as f:
                f.write("[profile.release]\ndebug = 1\n")
            args = regress_build.profile_overrides(repo, old, "release-lto")
            self.assertIn('profile.release-lto.lto="fat"', args)
            self.assertIn("profile.release-lto.codegen-units=1", args)
            self.assertEqual(regress_build.profile_overrides(repo, old, "release"), [])
            self.assertEqual(regress_build.profile_overrides(repo, repo, "release-lto"), [])


    def test_revisions_never_reuse_each_others_crates(self):
        # Regression: two revisions built in one target dir got the first one's binary, since
        # cargo keys path crates by workspace-relative path and `git archive` keeps old mtimes.
        old, new, wt = regress_build.parse_variants(["a:release,b:release,.:release"], None)
        self.assertEqual(regress_build.target_dir("/w", old), regress_build.target_dir("/w", new))
        self.assertNotEqual(regress_build.target_dir("/w", old), regress_build.target_dir("/w", wt))
        with tempfile.TemporaryDirectory() as src:
            os.makedirs(os.path.join(src, "crates"))
            f = os.path.join(src, "crates", "lib.rs")
            open(f, "w").close()
            os.utime(f, (1_000_000_000, 1_000_000_000))
            regress_build.touch_tree(src)
            self.assertGreater(os.stat(f).st_mtime, 1_700_000_000)


class BuildFailure(unittest.TestCase):
    def test_a_variant_that_does_not_build_is_reported_and_skipped(self):
        # cargo refuses an unknown feature before compiling anything: a fast failing build.
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        bin_ = os.path.join(repo, "target", "release", "talus")
        with tempfile.TemporaryDirectory() as work:
            (v,) = regress_build.parse_variants([".:release:no-such-feature"], None)
            with self.assertRaises(regress_build.BuildFailed) as e:
                regress_build.build(repo, work, v, log=open(os.devnull, "w"))
            self.assertIn("no-such-feature", str(e.exception))
            if not os.access(bin_, os.X_OK):
                return  # the end-to-end half needs a built talus (cargo test builds it)
            p = subprocess.run(
                [sys.executable, os.path.join(repo, "bench", "regress.py"),
                 f"--variants=ok=@{bin_},bad=.:release:no-such-feature", "--build-only",
                 f"--work={work}"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn(f"ok\t{bin_}", p.stdout)
            self.assertIn("build failed (skipped): bad", p.stdout)


class Summary(unittest.TestCase):
    def test_ratios_and_group_stats(self):
        results = {
            "a": {"w1": {"ops_sec": [100, 100, 300]}, "w2": {"ops_sec": [200]},
                  "p1": {"ops_sec": [50]}},
            "b": {"w1": {"ops_sec": [110, 110, 0]}, "w2": {"ops_sec": [180]},
                  "p1": {"ops_sec": []}},
            "c": {"w1": {"ops_sec": [121]}, "w2": {"ops_sec": [180]}, "p1": {"ops_sec": [50]}},
        }
        benches = [("w1", "write"), ("w2", "write"), ("p1", "point")]
        s = regress.summarize(["a", "b", "c"], benches, results, "first")["ops_sec"]
        self.assertEqual(s["values"]["a"]["w1"], 100)  # median of the rounds
        self.assertAlmostEqual(s["ratios"]["b"]["w1"], 1.1)
        self.assertAlmostEqual(s["ratios"]["b"]["w2"], 0.9)
        self.assertIsNone(s["ratios"]["b"]["p1"])
        g = s["groups"]["b"]["write"]
        self.assertAlmostEqual(g["avg"], 1.0)
        self.assertAlmostEqual(g["median"], 1.0)
        self.assertAlmostEqual((g["min"], g["max"]), (0.9, 1.1))
        self.assertAlmostEqual(g["stddev"], 0.1414213562, places=6)
        self.assertNotIn("point", s["groups"]["b"])
        self.assertAlmostEqual(s["geomean"]["b"], (1.1 * 0.9) ** 0.5)
        prev = regress.summarize(["a", "b", "c"], benches, results, "previous")["ops_sec"]
        self.assertAlmostEqual(prev["ratios"]["c"]["w1"], 121 / 110)
        self.assertAlmostEqual(prev["ratios"]["c"]["w2"], 1.0)

    def test_a_bench_the_first_lacks_is_relative_to_the_first_that_has_it(self):
        # h1 predates the tool (no value): h3 is relative to h2, and the bases say so.
        results = {"h1": {"w": {"instr_op": [100]}},
                   "h2": {"w": {"instr_op": [90]}, "i": {"instr_op": [1000]}},
                   "h3": {"w": {"instr_op": [99]}, "i": {"instr_op": [1100]}}}
        benches = [("w", "write"), ("i", "write")]
        s = regress.summarize(["h1", "h2", "h3"], benches, results, "first")["instr_op"]
        self.assertEqual(s["bases"], {"i": "h2"})
        self.assertIsNone(s["ratios"]["h2"]["i"])
        self.assertAlmostEqual(s["ratios"]["h3"]["i"], 1.1)
        self.assertAlmostEqual(s["ratios"]["h3"]["w"], 0.99)
        self.assertEqual(s["groups"]["h3"]["write"]["n"], 2)
        prev = regress.summarize(["h1", "h2", "h3"], benches, results, "previous")["instr_op"]
        self.assertEqual(prev["bases"], {})
        self.assertAlmostEqual(prev["ratios"]["h3"]["i"], 1.1)

    def test_flagged_names_the_worse_line(self):
        results = {"a": {"x": {"instr_op": [1000]}, "y": {"instr_op": [1000]}},
                   "b": {"x": {"instr_op": [1021]}, "y": {"instr_op": [1019]}}}
        s = regress.summarize(["a", "b"], [("x", "point"), ("y", "point")], results, "first")
        self.assertEqual(regress.flagged(s, ["a", "b"], [("x", "point"), ("y", "point")], 2.0),
                         ["instr_op x: b is 2.1% worse"])

    def test_marginal_cancels_fixed_cost(self):
        self.assertEqual(regress.marginal([(250, 5_000_000 + 250 * 300),
                                           (1000, 5_000_000 + 1000 * 300)]), 300)


class Parsers(unittest.TestCase):
    def test_db_bench_result_line(self):
        out = ("fillrandom   :       3.259 micros/op 306817 ops/sec 30.6 seconds 10000000 "
               "operations;   33.9 MB/s\nreadrandom   :       1.5 micros/op 666666 ops/sec "
               "1.5 seconds 1000000 operations;  (900 of 1000 found)\n")
        self.assertEqual(regress_suites.db_bench_result("readrandom")(out), (1000000, 666666.0))
        self.assertIsNone(regress_suites.db_bench_result("seekrandom")(out))

    def test_steps_scale_only_the_operation_count(self):
        step = next(s for s in regress_suites.cached(1000) if s.name == "readrandom")
        full, short = step.argv("t", "/db"), step.argv("t", "/db", 0.25)
        self.assertIn("--reads=500", full)
        self.assertIn("--reads=125", short)
        self.assertIn("--num=1000", short)
        fill = next(s for s in regress_suites.cached(1000) if s.name == "fillseq")
        self.assertFalse(any(a.startswith("--writes") for a in fill.argv("t", "/db")))
        self.assertIn("--writes=250", fill.argv("t", "/db", 0.25))

    def test_sysbench_steps_follow_its_help(self):
        names = regress_suites.sysbench_test_names(
            "usage\n--events=N\ntests: all, point\n  point-query (oltp_point_select)\n"
            "  insert (oltp_insert)\n  NAME.pre (a point or range test)\n")
        self.assertEqual(names, {"point-query", "insert"})
        steps = regress_suites.sysbench_steps(
            10000, [("point-query.pre", "point", 1), ("insert", "write", 1)])
        self.assertEqual([(s.name, s.group) for s in steps],
                         [("sb_prepare", None), ("sb_point-query.pre", "point"),
                          ("sb_insert", "write")])
        run = steps[1].argv("t", "/db")
        self.assertEqual(run[-3:], ["--events=500", "point-query.pre", "run"])
        self.assertIn("--time=0", run)
        self.assertIn("--events=125", steps[1].argv("t", "/db", 0.25))
        self.assertEqual(steps[0].argv("t", "/db")[-1], "prepare")
        self.assertEqual(steps[1].settle("t", "/db")[-1], "flush")
        no_flush = regress_suites.sysbench_steps(10000, [("insert", "write", 1)], ())
        self.assertIsNone(no_flush[1].settle)
        out = "SQL statistics:\n    transactions:                        1234   (123.40 per sec.)\n"
        self.assertEqual(steps[1].parse(out), (1234, 123.4))
        self.assertIsNone(steps[1].parse("no summary"))

    def test_sysbench_plugin_not_applicable_or_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            def fake(help_text, rc=0):
                return fake_talus(d, help_text, rc)
            # No sysbench at all, or one without fixed-work mode: not applicable, named.
            self.assertEqual(regress_suites.sysbench_plugin(fake("no", 2), 1000),
                             ([], "the binary has no `talus sysbench`"))
            steps, why = regress_suites.sysbench_plugin(fake("tests:\n  point-query"), 1000)
            self.assertEqual(steps, [])
            self.assertIn("--events", why)
            # The tool, but none of the tests: an error naming what it looked for.
            with self.assertRaises(regress_suites.PluginError) as e:
                regress_suites.sysbench_plugin(fake("--events=N\ntests:\n  nothing-here"),
                                               1000)
            self.assertIn("points-covered-pk", str(e.exception))
            self.assertIn("nothing-here", str(e.exception))
            # Some tests: those run, the rest are named.
            steps, why = regress_suites.sysbench_plugin(
                fake("--events=N\ntests:\n  point-query (oltp_point_select)\n  update-one"),
                1000)
            self.assertEqual([s.name for s in steps],
                             ["sb_prepare", "sb_update-one", "sb_point-query"])
            self.assertIn("points-covered-si", why)

    def test_ibench_steps_scale_only_the_measured_rows(self):
        steps = regress_suites.ibench_steps(8000)
        self.assertEqual([(s.name, s.group, s.fresh) for s in steps],
                         [("ib_l.i0", "write", True), ("ib_l.i1_0idx", "write", True),
                          ("ib_l.i1_3idx", "write", True)])
        load, pk, idx = steps
        self.assertIn("--num=8000", load.argv("t", "/db"))
        self.assertIn("--num=2000", load.argv("t", "/db", 0.25))
        full, short = idx.argv("t", "/db"), idx.argv("t", "/db", 0.25)
        # The load before the measured l.i1 is the same in both runs; only l.i1 shrinks.
        self.assertIn("--num=4000", full)
        self.assertIn("--num=4000", short)
        self.assertIn("--num_i1=2000", full)
        self.assertIn("--num_i1=500", short)
        self.assertIn("--steps=l.i0,l.x,l.i1", full)
        self.assertIn("--secondary_indexes=3", full)
        self.assertIn("--secondary_indexes=0", pk.argv("t", "/db"))
        out = ("summary l.i0 engine=talus secs=1.0 rows=4000 deleted=0 queries=0 ips=9000 x\n"
               "summary l.x engine=talus secs=0.5 rows=0 deleted=0 queries=0 ips=0 x\n"
               "summary l.i1 engine=talus secs=2.0 rows=2000 deleted=0 queries=0 ips=1000.5 x\n")
        self.assertEqual(idx.parse(out), (2000, 1000.5))
        self.assertEqual(load.parse(out), (4000, 9000.0))
        self.assertIsNone(idx.parse("summary l.i0 engine=talus secs=1 rows=1 ips=1 \n"))

    def test_ibench_plugin_not_applicable(self):
        with tempfile.TemporaryDirectory() as d:
            def fake(help_text, rc=0):
                return fake_talus(d, help_text, rc)
            self.assertEqual(regress_suites.ibench_plugin(fake("no", 2), 1000),
                             ([], "the binary has no `talus ibench`"))
            self.assertEqual(regress_suites.ibench_plugin(fake("--num_i1=1"), 1000),
                             ([], "its `talus ibench` has no --secondary_indexes"))
            steps, why = regress_suites.ibench_plugin(
                fake("--num_i1=1\n--secondary_indexes=3"), 1000)
            self.assertIsNone(why)
            self.assertEqual(len(steps), 3)


class CallgrindLayers(unittest.TestCase):
    # main (cli) calls table::get (inclusive 600), which calls engine::get (inclusive 450),
    # which calls malloc (100); main also calls engine::open directly (inclusive 300).
    # Names are compressed as callgrind writes them: defined once, then referred to by id.
    PROFILE = """# callgrind format
events: Ir
fl=(1) /w/crates/cli/src/main.rs
fn=(1) talus::main
1 50
cfl=(2) /w/crates/table/src/read.rs
cfn=(2) talus_table::get
calls=1 0
2 600
cfi=(3) /w/crates/engine/src/db.rs
cfn=(3) talus::db::open
calls=1 0
3 300

fl=(2)
fn=(2)
5 150
cfl=(3)
cfn=(4) talus::db::get
calls=1 0
6 450

fl=(3)
fn=(4)
fi=(4) /w/crates/engine/src/inline.rs
7 350
fe=(3)
cfl=(5) ./malloc/malloc.c
cfn=(5) malloc
calls=1 0
8 100

fn=(3)
9 300

fl=(5)
fn=(5)
10 100
"""

    def test_inclusive_split_by_crossing_calls(self):
        s = callgrind_layers.split(self.PROFILE)
        self.assertEqual(s["total"], 50 + 150 + 350 + 300 + 100)
        self.assertEqual(s["engine"], 450 + 300)  # what the engine runs, its malloc included
        self.assertEqual(s["table"], 600 - 450)
        self.assertEqual(s["rest"], 50)
        self.assertEqual(callgrind_layers.layer_of("./malloc/malloc.c"), "rest")


if __name__ == "__main__":
    unittest.main()
