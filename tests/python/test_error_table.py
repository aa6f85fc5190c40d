"""validation/error_table.py: one line per predicted row, with the features
of that row the models leave out, read from the row itself."""

import os
import subprocess
import sys
import unittest

from stepscope_testing import REPO, cli

SCRIPT = os.path.join(REPO, "validation", "error_table.py")


@unittest.skipUnless(cli(), "needs the stepscope CLI (STEPSCOPE_CLI)")
class ErrorTableTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        out = subprocess.run([sys.executable, SCRIPT, "--stepscope", cli(), "validation/recent_runs.csv"],
                             capture_output=True, text=True, cwd=REPO, check=True)
        cls.lines = out.stdout.splitlines()
        end = next(i for i, line in enumerate(cls.lines) if line.startswith("Rows above"))
        cls.rows = [line for line in cls.lines[:end] if line.startswith("| ") and line[2].isdigit()]
        cls.parts = [line for line in cls.lines[end:] if line.startswith("| ") and line[2].isdigit()]

    def test_every_predicted_row_once(self):
        summary = next(line for line in self.lines if line.startswith("Step time:"))
        count = int(summary.split("Step time: ")[1].split(" rows")[0])
        self.assertEqual(len(self.rows), count)
        self.assertEqual(len({r.split("|")[1] for r in self.rows}), count)

    def test_features_come_from_the_row(self):
        # The torchtitan float8 rowwise rows say so in their notes; the NeMo rows never run on a 500 W H100.
        rowwise = [r for r in self.rows if "rowwise modelled as tensorwise" in r]
        self.assertEqual(len(rowwise), 4)
        nemo = [r for r in self.rows if "| NeMo |" in r]
        self.assertTrue(nemo)
        self.assertFalse(any("500 W H100" in r for r in nemo))
        self.assertTrue(all("%" in r.split("|")[8] for r in self.rows))

    def test_rows_above_the_target_are_split_along_pairs(self):
        # Every row above ±10% once; a rowwise row's chain goes through its
        # tensorwise partner.
        above = [r for r in self.rows if abs(float(r.split("|")[8].strip().rstrip("%"))) > 10.0]
        self.assertEqual(len(self.parts), len(above))
        rowwise = [r for r in self.parts if "float8 rowwise (vs tensorwise)" in r]
        self.assertEqual(len(rowwise), 4)


class MeasuredPartsTest(unittest.TestCase):
    """The split of a row's error along published pairs, by hand."""

    def setUp(self):
        sys.path.insert(0, os.path.join(REPO, "validation"))
        import error_table
        self.et = error_table
        base = {"source": "s", "model": "m", "gpu": "H100", "tp": "8", "cp": "1", "seq": "8192", "dp": "4",
                "global_batch": "32", "dtype": "bf16", "torch_compile": "yes", "tp_overlap": "", "notes": "",
                "fp8_all_gather": "", "value": "1"}
        self.rows = [dict(base),
                     dict(base, dtype="fp8", value="2"),
                     dict(base, dtype="fp8", notes="float8 rowwise recipe", value="3"),
                     dict(base, dtype="fp8", notes="float8 rowwise recipe", tp_overlap="yes", value="4"),
                     dict(base, model="other", dtype="fp8", notes="rowwise")]  # no partner: another model

    def test_chain_and_parts(self):
        errors = {0: -10.0, 1: -12.0, 2: -34.0, 3: -40.0, 4: -20.0}
        parts, at = self.et.measured_parts(self.rows, errors, 3)
        # Row 3 (rowwise, async TP) has no tensorwise partner with async TP;
        # async TP off is row 2, whose tensorwise partner is row 1, whose
        # bf16 partner is row 0.
        self.assertEqual([(label, j) for label, _, j in parts],
                         [("async TP (vs off)", 2), ("float8 rowwise (vs tensorwise)", 1), ("float8 (vs bf16)", 0)])
        self.assertEqual(at, 0)
        got = [part for _, part, _ in parts]
        for part, want in zip(got, [100 * (0.60 / 0.66 - 1), 100 * (0.66 / 0.88 - 1), 100 * (0.88 / 0.90 - 1)]):
            self.assertAlmostEqual(part, want, places=6)

    def test_sequence_pairs_cross_tables_and_take_the_nearest_length(self):
        base = {"source": "bench Table 1", "model": "m", "gpu": "H100", "tp": "1", "cp": "1", "seq": "8192",
                "dp": "8", "global_batch": "16", "micro_batch": "2", "recompute": "op", "dtype": "bf16",
                "torch_compile": "no", "tp_overlap": "", "notes": "", "fp8_all_gather": "", "recompute_layers": ""}
        rows = [dict(base),
                dict(base, source="bench Table 2", seq="32768", global_batch="8", micro_batch="1", recompute="full"),
                dict(base, source="bench Table 2", seq="131072", cp="4", dp="2", global_batch="2",
                     micro_batch="1", recompute="full")]
        errors = {0: -5.0, 1: -10.0, 2: -30.0}
        parts, at = self.et.measured_parts(rows, errors, 2)
        # 128k with cp 4 pairs with the 32k row (not 8k), which pairs with 8k.
        self.assertEqual([(label, j) for label, _, j in parts],
                         [("context parallel at a longer sequence (vs cp 1)", 1),
                          ("long sequence (vs a shorter one)", 0)])
        self.assertEqual(at, 0)
        self.assertAlmostEqual(parts[0][1], 100 * (0.70 / 0.90 - 1), places=6)

    def test_no_partner_leaves_the_row_as_its_residual(self):
        parts, at = self.et.measured_parts(self.rows, {4: -20.0, 0: -10.0}, 4)
        self.assertEqual(parts, [])
        self.assertEqual(at, 4)


if __name__ == "__main__":
    unittest.main()
