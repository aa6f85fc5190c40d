"""stepscope.integrations.hf.StepscopeCallback in a real transformers Trainer on CPU
(the run: hf_training.py)."""

import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

from trace_check import StepClock, has_python_stacks, has_shapes, load_trace, profiler_steps, trace_files

HAVE_LIBS = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "accelerate"))
TOLERANCE_MS = 2.0  # the two clocks mark the same boundary a few calls apart

if HAVE_LIBS:
    from hf_training import train
    from transformers import TrainerCallback

    from stepscope.integrations.hf import StepscopeCallback

    class ClockCallback(TrainerCallback):
        """Marks each step's end just before the recorder does (callbacks run in order)."""

        def __init__(self):
            self.clock = StepClock()

        def on_step_end(self, args, state, control, **kwargs):
            self.clock.mark()


@unittest.skipUnless(HAVE_LIBS, "torch, transformers or accelerate is not installed")
class HfCallbackTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_trainer_run_writes_the_trace(self):
        mine = ClockCallback()
        callback = StepscopeCallback(self.out, wait=5, warmup=1, active=3)
        train(self.out, 12, [mine, callback])
        files = trace_files(self.out)
        self.assertEqual(files, callback.recorder.trace_paths)
        self.assertEqual(len(files), 1)
        trace = load_trace(files[0])
        self.assertEqual(profiler_steps(trace), [6, 7, 8])
        self.assertTrue(has_shapes(trace))
        self.assertTrue(has_python_stacks(trace))
        ms = trace["stepscope_unprofiled_step_ms"]
        steps = mine.clock.intervals_ms(1, 4)  # the recorder times wait steps 1..4
        self.assertGreater(ms, 0)
        self.assertGreaterEqual(ms, min(steps) - TOLERANCE_MS)
        self.assertLessEqual(ms, max(steps) + TOLERANCE_MS)
        self.assertNotIn("stepscope_note", trace)

    def test_training_that_stops_early_still_writes(self):
        callback = StepscopeCallback(self.out, wait=3, warmup=1, active=8)
        with self.assertWarnsRegex(UserWarning, "the loop ended at step 7"):
            train(self.out, 7, [callback])  # max_steps ends inside the window
        trace = load_trace(trace_files(self.out)[0])
        self.assertEqual(profiler_steps(trace), [4, 5, 6, 7])
        self.assertIn("3 of 8 recorded steps complete", trace["stepscope_note"])

    def test_a_raising_trainer_leaves_its_trace(self):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hf_training.py")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        done = subprocess.run([sys.executable, script, self.out, "12", "6"], env=env,
                              capture_output=True, text=True, timeout=120)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("ValueError: bad batch at step 6", done.stderr)
        self.assertIn("the training loop raised ValueError at step 6", done.stderr)
        trace = load_trace(trace_files(self.out)[0])
        self.assertIn("the training loop raised ValueError at step 6", trace["stepscope_note"])
        self.assertEqual(profiler_steps(trace), [4, 5, 6])


if __name__ == "__main__":
    unittest.main()
