"""stepscope.integrations.lightning.StepscopeCallback in a real Lightning Trainer on CPU."""

import importlib.util
import tempfile
import unittest

from trace_check import StepClock, has_python_stacks, has_shapes, load_trace, profiler_steps, trace_files

HAVE_LIBS = all(importlib.util.find_spec(m) is not None for m in ("torch", "lightning"))
TOLERANCE_MS = 2.0  # the two clocks mark the same boundary a few calls apart

if HAVE_LIBS:
    import lightning.pytorch as pl
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from stepscope.integrations.lightning import StepscopeCallback

    class TinyModule(pl.LightningModule):
        """A 2-layer MLP regression; raises in training_step at fail_at when set."""

        def __init__(self, fail_at=None):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
            self.fail_at = fail_at

        def training_step(self, batch, batch_idx):
            if batch_idx == self.fail_at:
                raise ValueError(f"bad batch at step {batch_idx}")
            x, y = batch
            return torch.nn.functional.mse_loss(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    class ClockCallback(pl.Callback):
        """Marks each batch's end just before the recorder does (callbacks run in order)."""

        def __init__(self):
            self.clock = StepClock()

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            self.clock.mark()

    def fit(module, steps, callbacks):
        torch.manual_seed(0)
        data = TensorDataset(torch.randn(8 * steps, 32), torch.randn(8 * steps, 1))
        trainer = pl.Trainer(max_steps=steps, accelerator="cpu", devices=1, logger=False,
                             enable_checkpointing=False, enable_progress_bar=False,
                             enable_model_summary=False, callbacks=callbacks)
        trainer.fit(module, DataLoader(data, batch_size=8))


@unittest.skipUnless(HAVE_LIBS, "torch or lightning is not installed")
class LightningCallbackTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_fit_writes_the_trace(self):
        mine = ClockCallback()
        callback = StepscopeCallback(self.out, wait=5, warmup=1, active=3)
        fit(TinyModule(), 12, [mine, callback])
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

    def test_a_raising_fit_leaves_its_trace_with_a_note(self):
        callback = StepscopeCallback(self.out, wait=3, warmup=1, active=5)
        with self.assertWarnsRegex(UserWarning, "raised ValueError at step 6"):
            with self.assertRaisesRegex(ValueError, "bad batch at step 6"):
                fit(TinyModule(fail_at=6), 12, [callback])
        trace = load_trace(trace_files(self.out)[0])
        self.assertIn("the training loop raised ValueError at step 6", trace["stepscope_note"])
        self.assertEqual(profiler_steps(trace), [4, 5, 6])


if __name__ == "__main__":
    unittest.main()
