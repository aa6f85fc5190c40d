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
        cls.rows = [line for line in cls.lines if line.startswith("| ") and line[2].isdigit()]

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


if __name__ == "__main__":
    unittest.main()
