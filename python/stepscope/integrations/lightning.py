"""A Lightning ``Callback`` that records one trace per rank.

::

    from stepscope.integrations.lightning import StepscopeCallback
    trainer = lightning.pytorch.Trainer(..., callbacks=[StepscopeCallback("traces")])

Recording starts at ``on_train_start``, each training batch ends at
``on_train_batch_end`` (with gradient accumulation a step is a batch, not
an optimizer step) and it stops at ``on_train_end``; ``on_exception`` writes
the trace recorded so far with a note. Uses ``lightning.pytorch`` where
installed, else the older ``pytorch_lightning`` package.
"""

try:
    from lightning.pytorch import Callback
except ImportError:
    from pytorch_lightning import Callback

from ..recorder import Recorder


class StepscopeCallback(Callback):
    """settings: those of ``stepscope.profile`` (wait, warmup, active, analyze, ...)."""

    def __init__(self, out_dir, **settings):
        Recorder(out_dir, **settings)  # checks the settings now, not at fit()
        self.out_dir = out_dir
        self.settings = settings
        self.recorder = None  # the current (or last) fit's

    def on_train_start(self, trainer, pl_module):
        if self.recorder is not None:
            self.recorder.stop(None)
        self.recorder = Recorder(self.out_dir, **self.settings).start()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if self.recorder is not None:
            self.recorder.step()

    def on_train_end(self, trainer, pl_module):
        if self.recorder is not None:
            self.recorder.stop(None)

    def on_exception(self, trainer, pl_module, exception):
        if self.recorder is not None:
            self.recorder.stop_after_failure(f"the training loop raised {type(exception).__name__}")
