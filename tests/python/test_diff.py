"""stepscope.diff from Python: the CLI's diff, its tables, and the CI gate."""

import json
import subprocess
import unittest

import stepscope
from stepscope_testing import cli, example


def stable(doc):
    doc = dict(doc)
    for side in ("before", "after"):
        doc[side] = {k: v for k, v in doc[side].items() if k != "inputs"}
    return doc


class DiffTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.worse = stepscope.diff(example("eager_bf16_baseline"), example("foreach_off_adamw"),
                                   fail_if=["step_time>+5%", "new_finding>=medium"])

    def test_gate_fails_on_the_regression_with_the_clis_verdict(self):
        self.assertTrue(self.worse.failed)
        self.assertTrue(self.worse.verdict.startswith("FAIL: step_time +"), self.worse.verdict)
        self.assertIn("new finding unfused_optimizer", self.worse.verdict)
        self.assertGreater(self.worse.step_time["change_pct"], 5.0)

    def test_gate_passes_on_the_fix(self):
        better = stepscope.diff(example("foreach_off_adamw"), example("eager_bf16_baseline"),
                                fail_if=["step_time>+5%"])
        self.assertFalse(better.failed)
        self.assertEqual(better.verdict, "pass: none of 1 condition holds")
        resolved = [r for r in better.findings if r["change"] == "resolved"]
        self.assertIn("unfused_optimizer", [r["category"] for r in resolved])

    def test_sides_are_reports(self):
        self.assertEqual(self.worse.after.primary_bottleneck,
                         stepscope.analyze(example("foreach_off_adamw")).primary_bottleneck)
        buckets = {r["bucket"] for r in self.worse.attribution}
        self.assertIn("host_overhead", buckets)

    @unittest.skipUnless(cli(), "no stepscope CLI to compare with")
    def test_json_equals_the_clis(self):
        out = subprocess.run([cli(), "diff", example("eager_bf16_baseline"), example("foreach_off_adamw"),
                              "--json", "-", "--fail-if", "step_time>+5%", "--fail-if", "new_finding>=medium"],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 1)
        self.assertEqual(stable(json.loads(out.stdout)), stable(self.worse.to_dict()))

    def test_a_bad_condition_is_an_option_error(self):
        with self.assertRaises(stepscope.OptionError) as e:
            stepscope.diff(example("item_sync"), example("item_sync"), fail_if=["step_tim>1%"])
        self.assertIn("unknown figure", str(e.exception))

    def test_a_missing_side_names_it(self):
        with self.assertRaises(stepscope.TraceError) as e:
            stepscope.diff(example("item_sync"), example("no_such_example"))
        self.assertTrue(str(e.exception).startswith("after: "), str(e.exception))


if __name__ == "__main__":
    unittest.main()
