"""A transformers ``TrainerCallback`` that records one trace per rank.

::

    from stepscope.integrations.hf import StepscopeCallback
    trainer = Trainer(..., callbacks=[StepscopeCallback("traces")])

Recording starts at ``on_train_begin``, each optimizer step ends at
``on_step_end`` and it stops at ``on_train_end`` (also reached when training
stops early, e.g. by ``EarlyStoppingCallback``). The Trainer has no hook for
an exception, so an exit hook stops a recording still running when the
process ends: the trace recorded so far is written with a note naming the
uncaught exception.
"""

import atexit
import sys

from transformers import TrainerCallback

from ..recorder import Recorder


class StepscopeCallback(TrainerCallback):
    """settings: those of ``stepscope.profile`` (wait, warmup, active, analyze, ...)."""

    def __init__(self, out_dir, **settings):
        Recorder(out_dir, **settings)  # checks the settings now, not at train()
        self.out_dir = out_dir
        self.settings = settings
        self.recorder = None  # the current (or last) training run's

    def on_train_begin(self, args, state, control, **kwargs):
        self._stop("an earlier train() ended without on_train_end")  # it raised
        self.recorder = Recorder(self.out_dir, **self.settings).start()
        atexit.register(self._stop_at_exit)

    def on_step_end(self, args, state, control, **kwargs):
        if self.recorder is not None:
            self.recorder.step()

    def on_train_end(self, args, state, control, **kwargs):
        self._stop(None)

    def _stop(self, cause):
        if self.recorder is not None:
            atexit.unregister(self._stop_at_exit)
            if cause is None:
                self.recorder.stop()
            else:
                self.recorder.stop_after_failure(cause)

    def _stop_at_exit(self):
        # sys.last_exc (3.12) / last_value: the exception that ended the program.
        error = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
        cause = (f"the training loop raised {type(error).__name__}" if error is not None
                 else "the process exited before on_train_end")
        self._stop(cause)
