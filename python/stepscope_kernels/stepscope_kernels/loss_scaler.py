"""Graph-safe loss scaler (issue #6 item 3).

``GraphSafeGradScaler`` has the API and the semantics of
``torch.amp.GradScaler`` (scale, unscale_, step, update, get_scale,
state_dict/load_state_dict; same growth/backoff rule, same rounding) with
three differences in how the work is done:

* one CUDA launch unscales and checks *all* gradients of an optimizer
  (fp32/fp16/bf16 mixed), instead of one ``_amp_foreach_non_finite_check_and_unscale_``
  per dtype, and it computes 1/scale itself (in float64, as GradScaler does)
  from the scale tensor, so nothing is read back to the host;
* the buffers it writes (found_inf per optimizer, per-tensor non-finite
  counts, the tensor table) are persistent, so ``unscale_``/``step``/``update``
  can be captured in a CUDA graph and replayed;
* it counts non-finite elements per gradient, so ``nonfinite_report`` can say
  in which parameter the first inf/NaN appeared.

No host synchronisation: for optimizers that take ``grad_scale``/``found_inf``
(``_step_supports_amp_scaling``: torch's fused Adam/AdamW/SGD/Adagrad) the
skip decision stays on the device, exactly as GradScaler does for them. Other
optimizers cannot skip a step without the host knowing, so ``step`` reads
found_inf once (like GradScaler) and warns once that this syncs.

Single device: all gradients of an optimizer must be on the scaler's device.
Sparse gradients are not supported (GradScaler unscales their values).
The table of gradient addresses is rebuilt when the addresses change (e.g.
``zero_grad(set_to_none=True)`` reallocating); inside CUDA graph capture the
addresses must be those of the warm-up step.
"""

from __future__ import annotations

import enum
import inspect
import warnings
from collections import defaultdict
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import torch

try:  # the CUDA extension
    from stepscope_kernels import _C  # type: ignore
except ImportError:  # pragma: no cover - depends on the build
    _C = None

_DESC_BYTES = 32  # sizeof(GradTensorDesc), src/kernels/gpu/loss_scaler.h


class _Stage(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> Dict[str, Any]:
    return {"stage": _Stage.READY, "found_inf": None}


class _GradPlan:
    """The device table of one optimizer's gradients and where its counts go."""

    def __init__(self, key, params: List[torch.Tensor], grads: List[torch.Tensor], device: torch.device):
        self.key = key
        self.params = params
        self.num_tensors = len(grads)
        host_table, self.total_tiles = _C.plan_grad_table(grads)
        # Pinned source + non_blocking: the copy is queued, the host does not wait.
        self.host_table = host_table
        self.table = host_table.to(device, non_blocking=True)
        self.counts = torch.zeros(len(grads), dtype=torch.int64, device=device)


class GraphSafeGradScaler:
    """torch.amp.GradScaler semantics; unscale, check and update on the device in fused kernels."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True,
                 allow_fp16_grads: bool = False):
        if enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
            if _C is None:
                raise RuntimeError("stepscope_kernels._C is not built: see docs/kernels.md (pip install "
                                   "--no-build-isolation -e python/stepscope_kernels)")
        self._device = torch.device(device)
        self._enabled = enabled
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        # torch.amp.GradScaler refuses to unscale fp16 gradients (fp16 master
        # weights); the kernel handles them, so this is an opt-in.
        self._allow_fp16_grads = allow_fp16_grads
        self._scale: Optional[torch.Tensor] = None
        self._growth_tracker: Optional[torch.Tensor] = None
        self._per_optimizer_states: Dict[int, Dict[str, Any]] = defaultdict(_fresh_state)
        self._plans: Dict[int, _GradPlan] = {}
        self._found_inf: Dict[int, torch.Tensor] = {}
        self._warned_sync = False

    # ----------------------------------------------------------------- state
    def _lazy_init(self, dev: torch.device) -> None:
        self._scale = torch.full((), self._init_scale, dtype=torch.float32, device=dev)
        self._growth_tracker = torch.full((), self._init_growth_tracker, dtype=torch.int32, device=dev)

    def _check_scale_growth_tracker(self, funcname: str) -> Tuple[torch.Tensor, torch.Tensor]:
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise RuntimeError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise RuntimeError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        """The current scale (a host sync, as in GradScaler)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_scale_tensor(self) -> Optional[torch.Tensor]:
        """The device scale tensor itself (no sync); None before the first scale()."""
        return self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())

    def state_dict(self) -> Dict[str, Any]:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    # ----------------------------------------------------------------- scale
    def scale(self, outputs: Union[torch.Tensor, Iterable[torch.Tensor]]):
        """outputs * scale (tensors or nested lists/tuples of them), as GradScaler.scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, torch.Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        def apply(val):
            if isinstance(val, torch.Tensor):
                if self._scale is None:
                    self._lazy_init(val.device)
                return val * self._scale.to(device=val.device, non_blocking=True)
            if isinstance(val, (list, tuple)):
                return type(val)(apply(v) for v in val)
            if isinstance(val, Iterable):
                return map(apply, val)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    # ------------------------------------------------------- unscale / check
    def _plan(self, optimizer: torch.optim.Optimizer, allow_fp16: bool) -> _GradPlan:
        params, grads = [], []
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                if not allow_fp16 and g.dtype == torch.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                if g.is_sparse:
                    raise NotImplementedError("GraphSafeGradScaler does not support sparse gradients")
                params.append(p)
                grads.append(g)
        key = tuple((g.data_ptr(), g.numel(), g.dtype, g.device) for g in grads)
        plan = self._plans.get(id(optimizer))
        if plan is not None and plan.key == key:
            return plan
        if torch.cuda.is_current_stream_capturing():
            raise RuntimeError("gradient addresses changed during CUDA graph capture: run one step with the "
                               "same gradient tensors before capturing (e.g. zero_grad(set_to_none=False))")
        for i, g in enumerate(grads):
            if g.device != self._scale.device:
                raise RuntimeError(f"gradient {i} of the optimizer is on {g.device}, the scale on "
                                   f"{self._scale.device}: GraphSafeGradScaler handles one device")
        plan = _GradPlan(key, params, grads, self._scale.device)
        self._plans[id(optimizer)] = plan
        return plan

    def _found_inf_buffer(self, optimizer) -> torch.Tensor:
        buf = self._found_inf.get(id(optimizer))
        if buf is None or buf.device != self._scale.device:
            buf = torch.zeros((), dtype=torch.float32, device=self._scale.device)
            self._found_inf[id(optimizer)] = buf
        return buf

    def _run_check(self, optimizer, unscale: bool, allow_fp16: bool) -> torch.Tensor:
        plan = self._plan(optimizer, allow_fp16)
        found = self._found_inf_buffer(optimizer)
        found.zero_()
        _C.unscale_and_check(plan.table, plan.num_tensors, plan.total_tiles,
                             self._scale if unscale else None, None, found, plan.counts)
        return found

    def unscale_(self, optimizer: torch.optim.Optimizer) -> None:
        """Divide the optimizer's gradients by the scale in place and record inf/NaN (no sync)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is _Stage.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        state["found_inf"] = self._run_check(optimizer, unscale=True, allow_fp16=self._allow_fp16_grads)
        state["stage"] = _Stage.UNSCALED

    # ------------------------------------------------------------------ step
    def _warn_sync_once(self, optimizer) -> None:
        if not self._warned_sync:
            self._warned_sync = True
            warnings.warn(f"GraphSafeGradScaler.step: {type(optimizer).__name__} does not accept "
                          "grad_scale/found_inf (no _step_supports_amp_scaling), so deciding whether to skip "
                          "the step reads found_inf on the host (one sync per step, as torch.amp.GradScaler). "
                          "Use a fused optimizer (e.g. torch.optim.AdamW(fused=True)) to avoid it.",
                          stacklevel=3)

    def step(self, optimizer: torch.optim.Optimizer, *args: Any, return_found_inf: bool = False, **kwargs: Any):
        """optimizer.step() unless the gradients held inf/NaN; GradScaler.step semantics."""
        if not self._enabled:
            retval = optimizer.step(*args, **kwargs)
            return (retval, False) if return_found_inf else retval
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")

        if getattr(optimizer, "_step_supports_amp_scaling", False):
            if "grad_scaler" in inspect.signature(optimizer.step).parameters:
                raise TypeError(f"{type(optimizer).__name__}.step takes a grad_scaler argument (the deprecated "
                                "torch.amp.GradScaler protocol); GraphSafeGradScaler passes grad_scale and "
                                "found_inf attributes only")
            if state["stage"] is _Stage.READY:
                # As GradScaler: check without unscaling; the fused optimizer
                # divides by grad_scale inside its own kernel.
                state["found_inf"] = self._run_check(optimizer, unscale=False, allow_fp16=True)
            found_inf = state["found_inf"]
            optimizer.grad_scale = (getattr(optimizer, "grad_scale", None) if state["stage"] is _Stage.UNSCALED
                                    else self._scale * getattr(optimizer, "grad_scale", 1))
            optimizer.found_inf = found_inf
            try:
                retval = optimizer.step(*args, **kwargs)
            finally:
                del optimizer.grad_scale
                del optimizer.found_inf
            state["stage"] = _Stage.STEPPED
            return (retval, found_inf) if return_found_inf else retval

        if state["stage"] is _Stage.READY:
            self.unscale_(optimizer)
        self._warn_sync_once(optimizer)
        found = bool(state["found_inf"].item())
        retval = None if found else optimizer.step(*args, **kwargs)
        state["stage"] = _Stage.STEPPED
        return (retval, found) if return_found_inf else retval

    # ---------------------------------------------------------------- update
    def update(self, new_scale: Optional[Union[float, torch.Tensor]] = None) -> None:
        """Back off after a skipped step, grow after growth_interval good ones; on the device."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if not isinstance(new_scale, torch.Tensor):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise ValueError(reason)
                scale.copy_(new_scale)
        else:
            found_infs = [s["found_inf"] for s in self._per_optimizer_states.values() if s["found_inf"] is not None]
            if not found_infs:
                raise RuntimeError("No inf checks were recorded prior to update.")
            combined = found_infs[0] if len(found_infs) == 1 else torch.stack(found_infs).sum()
            _C.update_scale(scale, tracker, combined, self._growth_factor, self._backoff_factor,
                            self._growth_interval)
        self._per_optimizer_states = defaultdict(_fresh_state)

    # ---------------------------------------------------------------- report
    def nonfinite_counts(self) -> Dict[int, int]:
        """id(param) -> non-finite gradient elements at its optimizer's last check (one sync)."""
        out: Dict[int, int] = {}
        for plan in self._plans.values():
            for p, c in zip(plan.params, plan.counts.tolist()):
                out[id(p)] = out.get(id(p), 0) + int(c)
        return out

    def nonfinite_report(self, model_or_named_params, include_finite: bool = False) -> List[Tuple[str, int]]:
        """(name, non-finite element count) per parameter, in backward order (reverse registration).

        Counts are those of the last unscale/check of each optimizer. The first
        entry is where the first inf/NaN appeared: gradients flow from the loss
        backwards, so the parameter nearest the loss that holds one is the
        origin. Registration order stands in for execution order; models that
        call modules out of registration order get an approximate answer.
        Only parameters with non-finite gradients are listed unless
        include_finite. Syncs with the device (only when called).
        """
        named = list(model_or_named_params.named_parameters()) if hasattr(model_or_named_params, "named_parameters") \
            else list(model_or_named_params)
        counts = self.nonfinite_counts()
        report = []
        for name, p in reversed(named):
            c = counts.get(id(p))
            if c is None:
                continue
            if c > 0 or include_finite:
                report.append((name, c))
        return report
