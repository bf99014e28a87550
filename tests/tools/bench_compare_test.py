#!/usr/bin/env python3
"""tools/bench-compare on fixed inputs (ctest: tools.bench-compare, label unit): the U-test
against brute force and SciPy's published example, the verdicts on clearly faster, slower and
equal series, Google Benchmark's JSON, the README region it rewrites and the drift check."""
import contextlib
import importlib.machinery
import importlib.util
import io
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "tools", "bench-compare")
FIXTURES = os.path.join(HERE, "fixtures", "bench")

_loader = importlib.machinery.SourceFileLoader("bench_compare", SCRIPT)
_spec = importlib.util.spec_from_loader("bench_compare", _loader)
bc = importlib.util.module_from_spec(_spec)
_loader.exec_module(bc)


def brute_force_p(x, y):
    """Two-sided exact p by enumerating every split of the pooled ranks."""
    n1 = len(x)
    pooled = sorted(x + y)
    u_obs = sum(1 for a in x for b in y if a > b)
    us = []
    for idx in itertools.combinations(range(len(pooled)), n1):
        xs = [pooled[i] for i in idx]
        ys = [pooled[i] for i in range(len(pooled)) if i not in idx]
        us.append(sum(1 for a in xs for b in ys if a > b))
    low = sum(1 for u in us if u <= u_obs) / len(us)
    high = sum(1 for u in us if u >= u_obs) / len(us)
    return min(1.0, 2 * min(low, high))


class UTest(unittest.TestCase):
    def test_fully_separated_series_reach_the_smallest_p(self):
        u, p = bc.mann_whitney_u([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
        self.assertEqual(u, 0)
        self.assertAlmostEqual(p, 2 / 252)
        self.assertAlmostEqual(bc.smallest_p(5, 5), 2 / 252)

    def test_exact_p_matches_brute_force(self):
        cases = [([1.0, 4.0, 6.0, 9.0], [2.0, 3.0, 5.0, 7.0, 8.0]),
                 ([10.5, 11.2, 9.8, 12.0, 10.1], [10.9, 11.5, 12.3, 11.8, 13.0]),
                 ([3.0, 1.0], [2.0, 4.0, 5.0])]
        for x, y in cases:
            with self.subTest(x=x, y=y):
                self.assertAlmostEqual(bc.mann_whitney_u(x, y)[1], brute_force_p(x, y))

    def test_scipy_documentation_example(self):
        # scipy.stats.mannwhitneyu's docstring: U1 = 17, exact p = 0.1111, asymptotic 0.11134...
        x, y = [19, 22, 16, 29, 24], [20, 11, 17, 12]
        self.assertEqual(bc.mann_whitney_u(x, y, "exact"), (17.0, 1 / 9))
        u, p = bc.mann_whitney_u(x, y, "asymptotic")
        self.assertAlmostEqual(p, 0.11134688653314041, places=12)

    def test_ties_use_the_corrected_normal_approximation(self):
        self.assertEqual(bc.mann_whitney_u([5, 5, 5], [5, 5, 5])[1], 1.0)
        _, p = bc.mann_whitney_u([1, 1, 2, 2, 3, 3], [7, 7, 8, 8, 9, 9])
        self.assertLess(p, 0.01)
        _, p_mixed = bc.mann_whitney_u([1, 2, 2, 3, 4], [1, 2, 3, 3, 4])
        self.assertGreater(p_mixed, 0.5)
        with self.assertRaises(ValueError):
            bc.mann_whitney_u([1, 2], [2, 3], "exact")


class Verdict(unittest.TestCase):
    base = [100.0, 101.0, 102.0, 103.0, 104.0]

    def test_clearly_slower_times(self):
        ratio, p, word = bc.verdict(self.base, [120.0, 121.0, 122.0, 123.0, 124.0])
        self.assertEqual(word, "slower")
        self.assertAlmostEqual(ratio, 122 / 102)
        self.assertLess(p, 0.05)

    def test_clearly_faster_times(self):
        self.assertEqual(bc.verdict(self.base, [80.0, 81.0, 82.0, 83.0, 84.0])[2], "faster")

    def test_equal_series_are_same(self):
        ratio, p, word = bc.verdict(self.base, [100.5, 101.5, 102.5, 103.5, 99.5])
        self.assertEqual(word, "same")
        self.assertGreater(p, 0.05)

    def test_a_significant_change_under_min_change_is_same(self):
        ratio, p, word = bc.verdict(self.base, [105.0, 105.5, 106.0, 106.5, 107.0])
        self.assertLess(p, 0.05)  # every repetition slower, but only by ~4%
        self.assertEqual(word, "same")
        self.assertEqual(bc.verdict(self.base, [105.0, 105.5, 106.0, 106.5, 107.0],
                                    min_change=0.01)[2], "slower")

    def test_one_outlier_does_not_make_a_verdict(self):
        # The median moves 20% but the repetitions overlap: not significant.
        self.assertEqual(bc.verdict(self.base, [90.0, 95.0, 122.4, 130.0, 140.0])[2], "same")

    def test_higher_is_better_for_throughput(self):
        self.assertEqual(bc.verdict([40.0, 41, 42, 43, 44], [60.0, 61, 62, 63, 64], "higher")[2],
                         "faster")
        self.assertEqual(bc.verdict([40.0, 41, 42, 43, 44], [20.0, 21, 22, 23, 24], "higher")[2],
                         "slower")

    def test_no_direction_says_higher_or_lower(self):
        self.assertEqual(bc.verdict([1.0, 1.01, 0.99, 1.02, 0.98], [2.0, 2.1, 1.9, 2.2, 1.8],
                                    "none")[2], "higher")

    def test_too_few_repetitions_cannot_decide(self):
        # 3 against 3: the smallest two-sided p is 0.1, so "same" would be vacuous.
        ratio, p, word = bc.verdict([100.0, 101, 102], [200.0, 201, 202])
        self.assertEqual((p, word), (None, "too few reps"))
        self.assertEqual(bc.verdict([100.0, 101, 102, 103], [200.0, 201, 202, 203])[2], "slower")


class Results(unittest.TestCase):
    def read(self, name):
        with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
            return f.read()

    def test_repetitions_kept_aggregates_dropped_skips_listed(self):
        rules = [{"match": "^Matmul/", "metric": "GFLOP/s", "better": "higher"}]
        results, skipped, errors = bc.parse_results(self.read("results.json"), "r.json", rules)
        self.assertEqual(results["BM_Pool/512"]["cpu_time"]["values"], [100, 102, 98, 101, 99])
        self.assertEqual(results["BM_Pool/512"]["cpu_time"]["unit"], "ns")
        self.assertEqual(list(results["Matmul/blas/256"]), ["GFLOP/s"])
        self.assertEqual(results["Matmul/blas/256"]["GFLOP/s"]["better"], "higher")
        self.assertIn("BM_Mimalloc/512", skipped)
        self.assertEqual(errors, {})

    def test_an_error_is_not_a_skip(self):
        doc = json.loads(self.read("results.json"))
        doc["benchmarks"][-1]["error_message"] = "result mismatch at 3"
        _, skipped, errors = bc.parse_results(json.dumps(doc), "r.json", [])
        self.assertEqual(errors, {"BM_Mimalloc/512": "result mismatch at 3"})

    def test_a_missing_counter_and_bad_json_are_input_errors(self):
        with self.assertRaisesRegex(bc.InputError, "has no 'nope'"):
            bc.parse_results(self.read("results.json"), "r.json", [{"match": "Pool", "metric": "nope"}])
        with self.assertRaisesRegex(bc.InputError, "r.json: not Google Benchmark JSON"):
            bc.parse_results("{", "r.json", [])


class Tree:
    """A throwaway checkout: labs/p99-demo/README.md and bench/p99-demo/baseline.json."""

    def __enter__(self):
        self.root = tempfile.mkdtemp(prefix="bench-compare-test-")
        os.makedirs(os.path.join(self.root, "labs", "p99-demo"))
        os.makedirs(os.path.join(self.root, "bench", "p99-demo"))
        shutil.copy(os.path.join(FIXTURES, "README.md"), self.readme)
        shutil.copy(os.path.join(FIXTURES, "baseline.json"), self.baseline)
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.root)

    @property
    def readme(self):
        return os.path.join(self.root, "labs", "p99-demo", "README.md")

    @property
    def baseline(self):
        return os.path.join(self.root, "bench", "p99-demo", "baseline.json")

    def run(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = bc.main(["p99-demo", "--root", self.root, *args])
        return rc, out.getvalue(), err.getvalue()

    def text(self, path):
        with open(path, encoding="utf-8") as f:
            return f.read()


EXPECTED_TABLE = """\
| what | 512 B | per run 1 | GFLOP/s per ns |
|---|---:|---|---|
| pool pair | 120 ns | 118 ns | |
| blas 256 | 42.5 | | 0.354 |
| mimalloc | skipped | | |
| pool pair in µs | 0.12 us | | |
"""

EXPECTED_SECOND = """\
| worst pool run |
|---|
| 122 ns |
| 15.0 ns per op |
| min 118 |
| max 122 |

Same run as the speed table (`bench/p99-demo/baseline.json`).
"""


class Readme(unittest.TestCase):
    def test_update_rewrites_only_the_region_then_check_passes(self):
        with Tree() as t:
            before = t.text(t.readme)
            self.assertEqual(t.run("--check-readme")[0], 1)  # the stale text is drift
            rc, _, err = t.run("--update-readme")
            self.assertEqual(rc, 0, err)
            after = t.text(t.readme)
            self.assertIn(EXPECTED_TABLE, after)
            self.assertIn("Median of 5 repetitions (`--benchmark_min_time=0.05`) on Test CPU, 2 cores,",
                          after)
            self.assertIn(EXPECTED_SECOND, after)
            self.assertNotIn("stale text", after)
            head, tail = before.split("stale text that --update-readme replaces\n")
            self.assertTrue(after.startswith(head))
            self.assertTrue(after.endswith(tail.split("<!-- bench-table:begin again -->")[1]
                                           .split("<!-- bench-table:end again -->")[1]))
            self.assertIn("\nText between.\n", after)
            rc, out, _ = t.run("--check-readme")
            self.assertEqual(rc, 0)
            self.assertIn("match", out)

    def test_a_hand_edited_figure_is_drift(self):
        with Tree() as t:
            t.run("--update-readme")
            edited = t.text(t.readme).replace("| pool pair | 120 ns", "| pool pair | 90 ns")
            with open(t.readme, "w", encoding="utf-8") as f:
                f.write(edited)
            rc, out, err = t.run("--check-readme")
            self.assertEqual(rc, 1)
            self.assertIn("-| pool pair | 90 ns", out)
            self.assertIn("+| pool pair | 120 ns", out)
            self.assertIn("run tools/lab bench p99-demo --update-readme", err)

    def test_markers_must_pair_and_match_the_baseline(self):
        with Tree() as t:
            text = t.text(t.readme)
            for broken, why in [
                    (text.replace("<!-- bench-table:end again -->\n", ""), "never closed"),
                    (text.replace("<!-- bench-table:end speed -->\n", ""), "begin again inside speed"),
                    (text.replace("begin speed", "begin other").replace("end speed", "end other"),
                     "no <!-- bench-table:begin speed --> region"),
                    (text + "<!-- bench-table:end speed -->\n", "without its begin")]:
                with open(t.readme, "w", encoding="utf-8") as f:
                    f.write(broken)
                rc, _, err = t.run("--check-readme")
                self.assertEqual(rc, 2, why)
                self.assertIn(why, err)
                self.assertTrue(err.startswith("bench-compare: error: "), err)


    def test_as_converts_only_between_time_units(self):
        with Tree() as t:
            doc = json.loads(t.text(t.baseline))
            doc["tables"]["speed"]["rows"][1][1]["as"] = "us"  # GFLOP/s is not a time
            with open(t.baseline, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            rc, _, err = t.run("--update-readme")
            self.assertEqual(rc, 2)
            self.assertIn("tables.speed.rows[1]: \"as\" converts between", err)


    def test_a_cell_naming_no_benchmark_is_an_error_unless_optional(self):
        with Tree() as t:
            doc = json.loads(t.text(t.baseline))
            doc["tables"]["speed"]["rows"][0][3] = {"bench": "BM_Pol/512"}  # a typo
            with open(t.baseline, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            rc, _, err = t.run("--update-readme")
            self.assertEqual(rc, 2)
            self.assertIn("tables.speed.rows[0]: no benchmark 'BM_Pol/512' in the baseline", err)
            doc["tables"]["speed"]["rows"][0][3]["optional"] = True
            with open(t.baseline, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            self.assertEqual(t.run("--update-readme")[0], 0)
            self.assertIn("| pool pair | 120 ns | 118 ns | — |", t.text(t.readme))


class Compare(unittest.TestCase):
    def test_side_by_side_with_verdicts(self):
        with Tree() as t:
            rc, out, err = t.run("--results", os.path.join(FIXTURES, "results.json"))
            self.assertEqual(rc, 0, err)
            lines = out.splitlines()
            pool = next(l for l in lines if l.startswith("BM_Pool/512 "))
            self.assertEqual(pool.split(), ["BM_Pool/512", "ns", "120", "100", "0.83", "0.008", "faster"])
            blas = next(l for l in lines if l.startswith("Matmul/blas/256 [GFLOP/s]"))
            self.assertEqual(blas.split()[-4:], ["42", "0.99", "0.674", "same"])
            self.assertRegex(out, r"1 same, 1 faster, 1 skipped: medians compared")

    def test_every_metric_of_a_benchmark_is_named_when_it_has_several(self):
        with Tree() as t:
            doc = json.loads(t.text(t.baseline))
            doc["metrics"] = [{"match": "Pool", "metric": "real_time"},
                              {"match": "Pool", "metric": "cpu_time"}]
            doc["benchmarks"]["BM_Pool/512"]["real_time"] = dict(
                doc["benchmarks"]["BM_Pool/512"]["cpu_time"])
            with open(t.baseline, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            rc, out, err = t.run("--results", os.path.join(FIXTURES, "results.json"))
            self.assertEqual(rc, 0, err)
            labels = [l.split()[:2] for l in out.splitlines() if l.startswith("BM_Pool")]
            self.assertEqual(labels, [["BM_Pool/512", "[cpu_time]"], ["BM_Pool/512", "[real_time]"]])
            self.assertEqual(bc.fmt_value(51870000.0), "51.87M")
            self.assertEqual(bc.fmt_value(3667.4), "3667")
            self.assertEqual(bc.fmt_value(0.0012), "1.200e-03")

    def test_filter_narrows_the_rows(self):
        with Tree() as t:
            rc, out, _ = t.run("--results", os.path.join(FIXTURES, "results.json"), "--filter", "Matmul")
            self.assertEqual(rc, 0)
            self.assertNotIn("BM_Pool", out)
            self.assertIn("Matmul/blas/256", out)

    def test_update_baseline_keeps_layout_and_records_the_run(self):
        with Tree() as t:
            rc, _, err = t.run("--results", os.path.join(FIXTURES, "results.json"),
                               "--update-baseline", "--update-readme")
            self.assertEqual(rc, 0, err)
            doc = json.loads(t.text(t.baseline))
            old = json.loads(t.text(os.path.join(FIXTURES, "baseline.json")))
            self.assertEqual(doc["tables"], old["tables"])
            self.assertEqual(doc["metrics"], old["metrics"])
            self.assertEqual(doc["note"], "A fixture.")
            self.assertEqual(doc["benchmarks"]["BM_Pool/512"]["cpu_time"]["median"], 100.0)
            self.assertEqual(doc["benchmarks"]["BM_Pool/512"]["cpu_time"]["values"],
                             [100.0, 102.0, 98.0, 101.0, 99.0])
            self.assertIn("BM_Mimalloc/512", doc["skipped"])
            for key in ("machine", "date", "commit"):
                self.assertTrue(doc[key])
            self.assertIn("| pool pair | 100 ns | 100 ns | |", t.text(t.readme))
            self.assertEqual(t.run("--check-readme")[0], 0)
            self.assertEqual([n for n in os.listdir(os.path.dirname(t.baseline))], ["baseline.json"])

    def test_context_keys_are_recorded_shown_and_printed(self):
        # The peer library's configuration (AddCustomContext) travels with the figures: kept
        # in the baseline, shown in a table title, printed beside the baseline's in a compare.
        with Tree() as t:
            results = json.loads(t.text(os.path.join(FIXTURES, "results.json")))
            results.setdefault("context", {}).update({"peer_core": "SkylakeX", "other": "x"})
            saved = os.path.join(t.root, "results.json")
            with open(saved, "w", encoding="utf-8") as f:
                json.dump(results, f)
            doc = json.loads(t.text(t.baseline))
            doc["context_keys"] = ["peer_core", "absent"]
            first = next(iter(doc["tables"].values()))
            first["columns"][0] = "what ({context:peer_core})"
            with open(t.baseline, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            rc, _, err = t.run("--results", saved, "--update-baseline", "--update-readme")
            self.assertEqual(rc, 0, err)
            new = json.loads(t.text(t.baseline))
            self.assertEqual(new["context"], {"peer_core": "SkylakeX"})
            self.assertEqual(new["context_keys"], ["peer_core", "absent"])
            self.assertIn("| what (SkylakeX) |", t.text(t.readme))
            results["context"]["peer_core"] = "Prescott"
            with open(saved, "w", encoding="utf-8") as f:
                json.dump(results, f)
            rc, out, _ = t.run("--results", saved)
            self.assertEqual(rc, 0)
            self.assertIn("peer_core: baseline SkylakeX; this run Prescott", out)
            self.assertIn("absent: baseline ?; this run ?", out)

    def test_errors_and_usage(self):
        with Tree() as t:
            doc = json.loads(t.text(os.path.join(FIXTURES, "results.json")))
            doc["benchmarks"][-1]["error_message"] = "wrong sum"
            bad = os.path.join(t.root, "bad.json")
            with open(bad, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            rc, _, err = t.run("--results", bad)
            self.assertEqual(rc, 1)
            self.assertIn("BM_Mimalloc/512: wrong sum", err)
            before = t.text(t.baseline)
            self.assertEqual(t.run("--results", bad, "--update-baseline")[0], 1)
            self.assertEqual(t.text(t.baseline), before)  # a failed run never replaces it
            rc, _, err = t.run("--results", bad, "--update-baseline", "--filter", "x")
            self.assertEqual((rc, err.strip()),
                             (2, "bench-compare: error: --update-baseline records the whole suite; drop --filter"))
            self.assertEqual(t.run("--results", os.path.join(t.root, "none.json"))[0], 2)
            self.assertEqual(t.run("--results", bad, "--filter", "(")[0], 2)
            doc = json.loads(t.text(t.baseline))
            del doc["benchmarks"]["BM_Pool/512"]["cpu_time"]["median"]
            with open(t.baseline, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            rc, _, err = t.run("--check-readme")
            self.assertEqual(rc, 2)
            self.assertIn("benchmarks.BM_Pool/512.cpu_time needs a number 'median'", err)
            with open(t.baseline, "w", encoding="utf-8") as f:
                f.write("{not json")
            rc, _, err = t.run("--check-readme")
            self.assertEqual(rc, 2)
            self.assertIn("baseline.json: not JSON", err)
            os.unlink(t.baseline)
            rc, _, err = t.run("--check-readme")
            self.assertEqual(rc, 2)
            self.assertIn("no baseline", err)
        rc, _, err = Tree.run(type("T", (), {"root": ROOT})(), "--check-readme")  # no such lab
        self.assertEqual(rc, 2)
        self.assertIn("no lab 'p99-demo'", err)


class RunsTheProgram(unittest.TestCase):
    def fake_bench(self, root, body):
        path = os.path.join(root, "bench-fake")
        with open(path, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, 0o755)
        return path

    def test_the_baselines_run_settings_and_the_filter_reach_the_program(self):
        with Tree() as t:
            args_file = os.path.join(t.root, "args")
            prog = self.fake_bench(t.root, f'printf "%s\\n" "$@" > {args_file}; '
                                           f'cat {os.path.join(FIXTURES, "results.json")}')
            rc, out, err = t.run("--bench", prog, "--filter", "Pool")
            self.assertEqual(rc, 0, err)
            self.assertEqual(t.text(args_file).split(), [
                "--benchmark_format=json", "--benchmark_repetitions=5",
                "--benchmark_min_time=0.05", "--benchmark_filter=Pool"])
            self.assertIn("BM_Pool/512", out)

    def test_a_failing_or_killed_program_is_exit_1(self):
        with Tree() as t:
            rc, _, err = t.run("--bench", self.fake_bench(t.root, "exit 3"))
            self.assertEqual(rc, 1)
            self.assertIn("exited with status 3", err)
            rc, _, err = t.run("--bench", self.fake_bench(t.root, "kill -SEGV $$"))
            self.assertEqual(rc, 1)
            self.assertIn("was killed by signal 11", err)
            rc, _, err = t.run("--bench", self.fake_bench(t.root, "echo not json"))
            self.assertEqual(rc, 2)
            self.assertIn("bench-fake: not Google Benchmark JSON", err)

    def test_a_filter_that_matches_nothing_is_named(self):
        with Tree() as t:  # Google Benchmark: "Failed to match any benchmarks" on stderr, exit 0
            rc, out, err = t.run("--bench", self.fake_bench(t.root, "exit 0"), "--filter", "NONE")
            self.assertEqual(rc, 2)
            self.assertEqual(out, "")
            self.assertIn("bench-compare: error: --filter 'NONE' matches no benchmark of bench-fake", err)


class LabCommand(unittest.TestCase):
    """tools/lab bench, copied into a throwaway tree so its labs are fixtures: the refusals come
    before any package check, configure or build."""

    def lab(self, tree, *args):
        return subprocess.run([os.path.join(tree.root, "tools", "lab"), "bench", *args],
                              capture_output=True, text=True, check=False)

    def setUp(self):
        self.tree = Tree().__enter__()
        root = self.tree.root
        os.makedirs(os.path.join(root, "tools"))
        for tool in ("lab", "bench-compare"):
            shutil.copy(os.path.join(ROOT, "tools", tool), os.path.join(root, "tools", tool))
        for lab, cmake in (("p99-demo", "gpulab_add_lab(demo)\n"), ("p98-nobench", "gpulab_add_lab(nobench)\n"),
                           ("p97-nobaseline", "gpulab_add_lab(nobaseline)\n")):
            os.makedirs(os.path.join(root, "labs", lab), exist_ok=True)
            with open(os.path.join(root, "labs", lab, "CMakeLists.txt"), "w", encoding="utf-8") as f:
                f.write(cmake)
        os.makedirs(os.path.join(root, "bench", "p97-nobaseline"))
        open(os.path.join(root, "bench", "p97-nobaseline", "x_bench.cpp"), "w", encoding="utf-8").close()

    def tearDown(self):
        self.tree.__exit__(None, None, None)

    def test_usage_and_refusals_exit_2_with_one_line(self):
        t = self.tree
        r = self.lab(t)
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage: tools/lab bench LAB", r.stderr)
        for args, line in [
                (["p99-no-such-lab"], "no lab 'p99-no-such-lab' (tools/lab list shows the labs)"),
                (["../tools"], "no lab '../tools' (tools/lab list shows the labs)"),
                (["p98-nobench"], "lab 'p98-nobench' has no benchmark suite (bench/p98-nobench/)"),
                (["p97-nobaseline"],
                 "no baseline bench/p97-nobaseline/baseline.json (docs/testing.md: how to add one)")]:
            r = self.lab(t, *args)
            self.assertEqual((r.returncode, r.stderr.strip()), (2, "lab: error: " + line), args)

    def test_update_readme_alone_builds_nothing(self):
        t = self.tree
        r = self.lab(t, "p99-demo", "--update-readme")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(EXPECTED_TABLE, t.text(t.readme))
        self.assertFalse(os.path.exists(os.path.join(t.root, "build")))


if __name__ == "__main__":
    unittest.main(verbosity=1)
