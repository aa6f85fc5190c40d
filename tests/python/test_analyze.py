"""stepscope.analyze from Python: the same report as the CLI, the tables
built from it, the outputs, and bad input raised as stepscope errors."""

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

import stepscope
from stepscope_testing import EXAMPLES, cli, example, stable

try:
    import pandas  # noqa: F401

    HAVE_PANDAS = True
except ImportError:
    HAVE_PANDAS = False


class AnalyzeMatchesCliTest(unittest.TestCase):
    @unittest.skipUnless(cli(), "no stepscope CLI to compare with")
    def test_json_equals_the_cli_report_on_every_example(self):
        for name in sorted(os.listdir(EXAMPLES)):
            path = example(name)
            if not os.path.isdir(path):
                continue
            with self.subTest(example=name):
                out = subprocess.run([cli(), "analyze", path, "--json", "-"], capture_output=True, text=True,
                                     check=True)
                want = stable(json.loads(out.stdout))
                got = stable(json.loads(stepscope.analyze(path).to_json()))
                self.assertEqual(got, want)

    def test_primary_bottlenecks_of_the_examples(self):
        # Each example is named after the cause it was made to show.
        self.assertEqual(stepscope.analyze(example("dataloader_stall")).primary_bottleneck, "data_pipeline")
        self.assertEqual(stepscope.analyze(example("host_bound_tiny")).primary_bottleneck, "host_overhead")
        self.assertEqual(stepscope.analyze(example("fp32_no_tf32")).primary_bottleneck, "compute_efficiency")


class ReportObjectsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.report = stepscope.analyze(example("host_bound_tiny"))
        cls.doc = cls.report.to_dict()

    def test_findings_carry_the_reported_saving_and_remedy(self):
        findings = self.report.findings
        self.assertEqual([f.category for f in findings], [f["category"] for f in self.doc["diagnosis"]["findings"]])
        first = findings[0]
        self.assertEqual(first.category, self.report.primary_bottleneck)
        self.assertGreater(first.saving_us, 0)
        self.assertIn(first.saving_basis, ("replay", "bound"))
        self.assertTrue(first.remedy)
        self.assertTrue(first.evidence["examples"])
        # Savings are sorted, and all fixes together never exceed the step.
        savings = [f.saving_us for f in findings]
        self.assertEqual(savings, sorted(savings, reverse=True))
        step_us = self.doc["ranks"][0]["attribution"]["mean_step_us"]
        self.assertLessEqual(self.report.combined_saving_us, step_us)

    def test_attribution_buckets_sum_to_each_step(self):
        rows = self.report.attribution.rows
        steps = {r["step"] for r in rows}
        self.assertEqual(len(steps), len(self.doc["ranks"][0]["attribution"]["steps"]))
        for step in steps:
            self.assertAlmostEqual(sum(r["pct"] for r in rows if r["step"] == step), 100.0, places=6)

    def test_tables_hold_every_row_of_the_report(self):
        rank = self.doc["ranks"][0]
        self.assertEqual(len(self.report.steps), len(rank["steps"]))
        self.assertEqual(len(self.report.kernels), len(rank["top_kernels"]))
        self.assertEqual(len(self.report.idle), len(rank["idle_breakdown"]))
        self.assertEqual(self.report.steps[0]["cpu_duration_us"], rank["steps"][0]["cpu_duration_us"])
        path_steps = rank["critical_path"]["steps"]
        self.assertEqual(len(self.report.critical_path), sum(len(s["by_category"]) for s in path_steps))

    def test_kernels_across_ranks(self):
        # One rank: no job-wide table. The same trace as two ranks: every launch counted twice.
        self.assertEqual(len(self.report.kernels_across_ranks), 0)
        with tempfile.TemporaryDirectory() as d:
            for r in (0, 1):
                shutil.copy(os.path.join(example("host_bound_tiny"), "rank0.json.gz"), os.path.join(d, f"rank{r}.json.gz"))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                two = stepscope.analyze(d)
        rows = two.kernels_across_ranks
        self.assertEqual(rows.rows, [{c: r.get(c) for c in rows.columns}
                                     for r in two.to_dict()["multi_rank"]["kernels"]["top"]])
        per_rank = {(k["type"], k["name"]): k["count"] for k in self.doc["ranks"][0]["top_kernels"]}
        self.assertGreater(len(rows), 0)
        for row in rows:
            self.assertEqual(row["ranks"], 2)
            if (row["type"], row["name"]) in per_rank:
                self.assertEqual(row["count"], 2 * per_rank[(row["type"], row["name"])])
            self.assertLessEqual(row["min_us"], row["p50_us"])
            self.assertLessEqual(row["p99_us"], row["max_us"])

    @unittest.skipUnless(HAVE_PANDAS, "pandas not installed")
    def test_to_pandas(self):
        df = self.report.attribution.to_pandas()
        self.assertEqual(list(df.columns), ["rank", "step", "bucket", "us", "pct"])
        by_step = df.groupby("step")["pct"].sum()
        self.assertTrue(((by_step - 100.0).abs() < 1e-6).all())
        self.assertEqual(len(self.report.kernels.to_pandas()), len(self.report.kernels))

    def test_outputs_are_written_where_asked(self):
        with tempfile.TemporaryDirectory() as d:
            html_path = self.report.to_html(os.path.join(d, "r.html"))
            with open(html_path, encoding="utf-8") as f:
                self.assertIn("<html", f.read(2000).lower())
            pf = self.report.to_perfetto(os.path.join(d, "r.json.gz"))
            with gzip.open(pf, "rt") as f:
                self.assertIn("traceEvents", json.load(f))
            with self.assertRaises(stepscope.Error):
                self.report.to_perfetto(os.path.join(d, "no_such_dir", "r.json"))

    def test_notebook_view_is_the_page_in_an_iframe(self):
        view = self.report._repr_html_()
        self.assertTrue(view.startswith("<iframe srcdoc="))
        self.assertNotIn("<script", view)  # the page is escaped inside the attribute
        self.assertIn("primary", self.report.to_text().lower())


class BadInputTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_not_a_trace(self):
        path = os.path.join(self.dir, "notes.json")
        with open(path, "w") as f:
            f.write("hello")
        with self.assertRaises(stepscope.TraceError) as e:
            stepscope.analyze(path)
        self.assertEqual(e.exception.path, path)
        self.assertEqual(e.exception.offset, 0)
        self.assertIn(path, str(e.exception))

    def test_empty_folder(self):
        with self.assertRaises(stepscope.TraceError) as e:
            stepscope.analyze(self.dir)
        self.assertIn("no .json or .json.gz files", str(e.exception))

    def test_damaged_file_names_the_byte(self):
        src = os.path.join(example("host_bound_tiny"), "rank0.json.gz")
        with gzip.open(src, "rb") as f:
            text = f.read()
        path = os.path.join(self.dir, "cut.json")
        with open(path, "wb") as f:
            f.write(text[: len(text) // 2])
        with self.assertRaises(stepscope.TraceError) as e:
            stepscope.analyze(path)
        self.assertEqual(e.exception.path, path)
        self.assertIsNotNone(e.exception.offset)
        self.assertLessEqual(e.exception.offset, len(text) // 2)
        # A file cut after its device records keeps its steps: with salvage,
        # what the CLI prints as a warning is a Python warning.
        with open(path, "wb") as f:
            f.write(text[:-200])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = stepscope.analyze(path, salvage=True)
        self.assertTrue(any(issubclass(w.category, stepscope.StepscopeWarning) for w in caught))
        self.assertTrue(report.warnings)

    def test_unknown_detector_lists_the_valid_ones(self):
        with self.assertRaises(stepscope.OptionError) as e:
            stepscope.analyze(example("item_sync"), disable_detectors=["host_sinc"])
        self.assertIn("host_sync", str(e.exception))
        self.assertIsInstance(e.exception, ValueError)

    def test_missing_path(self):
        with self.assertRaises(stepscope.TraceError):
            stepscope.analyze(os.path.join(self.dir, "nope.json"))


class ImportTest(unittest.TestCase):
    def test_import_loads_neither_pandas_nor_the_native_module(self):
        # Import time matters (< 200 ms, measured in bench/python_overhead.py):
        # what is heavy loads on first use only.
        code = ("import sys, stepscope; "
                "print(sorted(m for m in ('pandas', 'torch', 'stepscope._stepscope') if m in sys.modules))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ})
        self.assertEqual(out.stdout.strip(), "[]")


if __name__ == "__main__":
    unittest.main()
