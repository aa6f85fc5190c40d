"""examples/notebook.ipynb runs from top to bottom (nbclient, the notebook's
own kernel) and shows what it says: the primary bottleneck, the findings,
the DataFrames and the inline report."""

import json
import os
import unittest

from stepscope_testing import EXAMPLES

try:
    import nbclient
    import nbformat

    HAVE_NBCLIENT = True
except ImportError:
    HAVE_NBCLIENT = False


@unittest.skipUnless(HAVE_NBCLIENT, "nbclient/nbformat not installed (python/requirements-test.txt)")
class NotebookTest(unittest.TestCase):
    def test_notebook_executes_and_shows_the_report(self):
        nb = nbformat.read(os.path.join(EXAMPLES, "notebook.ipynb"), as_version=4)
        client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                         resources={"metadata": {"path": EXAMPLES}})
        client.execute()  # raises CellExecutionError on any failing cell
        code = [c for c in nb.cells if c.cell_type == "code"]
        outputs = [o for c in code for o in c.get("outputs", [])]
        self.assertFalse([o for o in outputs if o.get("output_type") == "error"])
        self.assertEqual(code[0].outputs[0]["data"]["text/plain"], "'host_overhead'")
        self.assertIn("host_overhead", code[1].outputs[0]["data"]["text/plain"])
        self.assertIn("text/html", code[2].outputs[0]["data"])  # a DataFrame
        gate = [c for c in code if "stepscope.diff(" in c.source][0]
        self.assertEqual(gate.outputs[0]["data"]["text/plain"], "(False, 'pass: none of 2 conditions holds')")
        planned = [c for c in code if "stepscope.plan(" in c.source][0]
        self.assertTrue(planned.outputs[0]["data"]["text/plain"].startswith("(True, "))
        searched = [c for c in code if "stepscope.plan_search(" in c.source][0]
        self.assertIn("text/html", searched.outputs[0]["data"])  # the layouts as a DataFrame
        inline = code[-1].outputs[0]["data"]["text/html"]
        self.assertTrue(inline.startswith("<iframe srcdoc="))
        self.assertGreater(len(inline), 10000)
        json.dumps(nb)  # the executed notebook is still valid JSON


if __name__ == "__main__":
    unittest.main()
