"""stepscope.profile / stepscope.record with the real torch.profiler on CPU."""

import importlib.util
import io
import os
import subprocess
import sys
import tempfile
import unittest
import warnings
from contextlib import redirect_stdout
from unittest import mock

from trace_check import StepClock, has_python_stacks, has_shapes, load_trace, profiler_steps, trace_files

HAVE_TORCH = importlib.util.find_spec("torch") is not None
SLEEP_S = 0.004  # every step sleeps this long, so a step is at least this
# The recorder's boundaries and the test's are a few µs apart (a call or
# two); 2 ms also covers a preemption between them on a busy 2-core machine.
TOLERANCE_MS = 2.0

if HAVE_TORCH:
    import torch

    from stepscope import recorder as rec


class TinyLoop:
    """A small CPU training step (forward, backward, optimizer) plus a sleep."""

    def __init__(self, fail_at=None):
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.fail_at = fail_at
        self.calls = 0

    def __call__(self):
        if self.calls == self.fail_at:
            raise ValueError(f"bad batch at step {self.calls}")
        self.calls += 1
        loss = self.model(torch.randn(16, 32)).pow(2).mean()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        import time

        time.sleep(SLEEP_S)


def run(out_dir, steps, loop=None, clock=None, **settings):
    loop = loop or TinyLoop()
    with rec.profile(out_dir, **settings) as prof:
        for _ in range(steps):
            loop()
            if clock:
                clock.mark()
            prof.step()
    return prof


@unittest.skipUnless(HAVE_TORCH, "torch is not installed")
class RecorderTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_trace_has_what_the_diagnosis_needs(self):
        clock = StepClock()
        prof = run(self.out, 10, clock=clock, wait=5, warmup=1, active=2)
        files = trace_files(self.out)
        self.assertEqual(files, prof.trace_paths)
        self.assertEqual(len(files), 1)
        trace = load_trace(files[0])
        self.assertEqual(profiler_steps(trace), [6, 7])  # exactly the active steps
        self.assertTrue(has_shapes(trace), "record_shapes: no op has Input Dims")
        self.assertTrue(has_python_stacks(trace), "with_stack: no python_function event")
        self.assertTrue(trace.get("profile_memory"))
        # The wait phase's steps 1..4 are timed (step 0 is not: setup).
        ms = trace["stepscope_unprofiled_step_ms"]
        self.assertIsInstance(ms, float)
        mine = clock.intervals_ms(1, 4)
        self.assertGreaterEqual(ms, SLEEP_S * 1e3)
        self.assertGreaterEqual(ms, min(mine) - TOLERANCE_MS)
        self.assertLessEqual(ms, max(mine) + TOLERANCE_MS)
        self.assertEqual(ms, prof.unprofiled_step_ms)
        self.assertEqual(len(prof.unprofiled_intervals_ms), 4)
        clock_used = "cuda_event" if torch.cuda.is_available() else "perf_counter"
        self.assertEqual(trace["stepscope_recorder"]["unprofiled_clock"], clock_used)
        self.assertNotIn("stepscope_note", trace)

    def test_a_raising_loop_leaves_its_trace_with_a_note(self):
        loop = TinyLoop(fail_at=6)
        with self.assertWarnsRegex(UserWarning, "raised ValueError at step 6"):
            with self.assertRaisesRegex(ValueError, "bad batch at step 6"):
                run(self.out, 9, loop=loop, wait=3, warmup=1, active=4)
        files = trace_files(self.out)
        self.assertEqual(len(files), 1)
        trace = load_trace(files[0])
        self.assertIn("the training loop raised ValueError at step 6", trace["stepscope_note"])
        self.assertEqual(profiler_steps(trace), [4, 5, 6])  # step 6 ends at the raise
        self.assertGreater(trace["stepscope_unprofiled_step_ms"], 0)

    def test_a_raise_before_recording_writes_nothing_and_says_so(self):
        with self.assertWarnsRegex(UserWarning, "in the wait phase.*no trace written"):
            with self.assertRaises(ValueError):
                run(self.out, 9, loop=TinyLoop(fail_at=1), wait=3, warmup=1, active=2)
        self.assertEqual(trace_files(self.out), [])

    def test_a_loop_shorter_than_the_window_is_noted(self):
        with self.assertWarnsRegex(UserWarning, "the loop ended at step 5"):
            prof = run(self.out, 5, wait=3, warmup=1, active=4)
        trace = load_trace(prof.trace_paths[0])
        self.assertEqual(profiler_steps(trace), [4, 5])
        self.assertIn("1 of 4 recorded steps complete", trace["stepscope_note"])

    def test_a_failed_write_does_not_mask_the_loops_exception(self):
        def disk_full(self, prof):
            raise OSError("disk full")

        with mock.patch.object(rec.Recorder, "_write_trace", disk_full):
            with self.assertWarnsRegex(UserWarning, "could not write the trace.*disk full"):
                with self.assertRaisesRegex(ValueError, "bad batch"):
                    run(self.out, 9, loop=TinyLoop(fail_at=5), wait=3, warmup=1, active=4)

    def test_steps_after_the_window_leave_torch_alone(self):
        prof = run(self.out, 30, wait=3, warmup=1, active=2)
        self.assertEqual(prof.step_num, 30)
        self.assertEqual(prof.profiler.step_num, 6)  # torch's profiler closed with the trace
        self.assertEqual(len(prof.trace_paths), 1)
        self.assertNotIn("stepscope_note", load_trace(prof.trace_paths[0]))

    def test_rank_comes_from_env(self):
        with mock.patch.dict(os.environ, {"RANK": "3"}):
            prof = run(self.out, 6, wait=3, warmup=1, active=2)
        self.assertEqual(prof.rank, 3)
        self.assertEqual(len(trace_files(self.out, rank=3)), 1)
        self.assertEqual(trace_files(self.out, rank=0), [])

    def test_a_bad_env_rank_is_rank_0_with_a_warning(self):
        with mock.patch.dict(os.environ, {"RANK": "x"}):
            with self.assertWarnsRegex(UserWarning, "RANK='x' is not a rank"):
                prof = run(self.out, 6, wait=3, warmup=1, active=2)
        self.assertEqual(prof.rank, 0)

    def test_too_few_wait_steps_write_no_measurement(self):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            prof = run(self.out, 5, wait=2, warmup=1, active=2)
        said = [str(w.message) for w in caught if "stepscope_unprofiled_step_ms" in str(w.message)]
        self.assertEqual(len(said), 1, said)  # once
        trace = load_trace(prof.trace_paths[0])
        self.assertNotIn("stepscope_unprofiled_step_ms", trace)
        self.assertIsNone(prof.unprofiled_step_ms)
        self.assertEqual(profiler_steps(trace), [3, 4])

    def test_record_calls_the_step_for_the_whole_window(self):
        loop = TinyLoop()
        prof = rec.record(loop, self.out, wait=3, warmup=1, active=2)
        self.assertEqual(loop.calls, 6)
        self.assertEqual(profiler_steps(load_trace(prof.trace_paths[0])), [4, 5])
        self.assertIsNotNone(prof.unprofiled_step_ms)

    def test_analyze_without_the_extension_prints_the_command(self):
        def missing():
            raise ImportError("no analyze")

        out = io.StringIO()
        with mock.patch.object(rec, "_import_analyze", missing), redirect_stdout(out):
            run(self.out, 6, wait=3, warmup=1, active=2, analyze=True)
        self.assertIn(f"stepscope analyze {self.out}", out.getvalue())

    def test_bad_settings_are_refused(self):
        for bad in ({"active": 0}, {"wait": -1}, {"warmup": 1.5}, {"rank": -2}, {"wait": True}):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                rec.profile(self.out, **bad)
        with self.assertRaisesRegex(RuntimeError, "before start"):
            rec.profile(self.out).step()


@unittest.skipUnless(HAVE_TORCH and torch.cuda.is_available(), "no CUDA device")
class CudaRecorderTest(unittest.TestCase):
    def test_cuda_steps_are_timed_on_the_stream(self):
        x = torch.randn(2048, 2048, device="cuda")
        clock = StepClock()

        def step():
            for _ in range(20):
                x.copy_(torch.tanh(x @ x) * 0.01)
            torch.cuda.synchronize()  # the test's clock then sees the GPU's step too
            clock.mark()

        with tempfile.TemporaryDirectory() as out:
            with rec.profile(out, wait=5, warmup=1, active=2) as prof:
                for _ in range(8):
                    step()
                    prof.step()
            trace = load_trace(trace_files(out)[0])
        self.assertEqual(trace["stepscope_recorder"]["unprofiled_clock"], "cuda_event")
        self.assertTrue(any(e.get("cat") == "kernel" for e in trace["traceEvents"]))
        self.assertEqual(profiler_steps(trace), [6, 7])
        ms = trace["stepscope_unprofiled_step_ms"]
        mine = clock.intervals_ms(1, 4)
        self.assertGreaterEqual(ms, min(mine) - TOLERANCE_MS)
        self.assertLessEqual(ms, max(mine) + TOLERANCE_MS)


class ImportTest(unittest.TestCase):
    def test_importing_the_recorder_imports_no_torch(self):
        code = "import sys, stepscope.recorder; assert 'torch' not in sys.modules, 'torch imported'"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        subprocess.run([sys.executable, "-c", code], check=True, env=env)


if __name__ == "__main__":
    unittest.main()
