"""``stepscope.plan`` and ``stepscope.plan_search``: the planner's predictions.

Both hand their keywords to the C++ library (src/pipeline/plan_run.h), which
checks them as the CLI does and predicts with the same models: the Python
figures are those of ``stepscope plan --json`` and ``stepscope plan search
--json`` (docs/planner.md). A refused input raises :class:`OptionError`
naming the keyword.
"""

import html
import os

from .errors import OptionError, raise_for
from .report import JsonDocument
from .table import Table

_MEMORY_PARTS = ["weights", "gradients", "optimizer", "activations", "temporary"]  # they add up to the peak allocated
_STEP_PARTS = ["compute_fwd", "compute_bwd", "attention", "recompute", "tp_comm", "ep_comm", "offload", "launch",
               "cp_comm", "pp_p2p", "embedding_and_loss", "bubble", "dp_comm_exposed", "optimizer"]


class _TextDocument(JsonDocument):
    """A planner answer: JSON, the CLI's text, and that text in a notebook."""

    def __str__(self):
        return self.to_text()

    def _repr_html_(self):
        return f"<pre>{html.escape(self.to_text())}</pre>"


class PlanReport(_TextDocument):
    """What ``stepscope plan`` predicts for one layout: memory per GPU and step time."""

    def to_text(self, explain=False):
        """The terminal report; ``explain`` adds the per-layer breakdown."""
        return self._native.text(explain)

    def __repr__(self):
        d = self.to_dict()
        return (f"<stepscope.PlanReport {d['model']['name']} on {d['cluster']['gpus']} x {d['cluster']['gpu']}: "
                f"{self.memory_gb:.2f} GB per GPU ({'fits' if self.fits else 'does not fit'}), "
                f"step {self.step_seconds:.4f} s>")

    @property
    def fits(self):
        """True when the peak memory of the fullest pipeline stage fits the device."""
        return self.to_dict()["memory_bytes"]["fits"]

    @property
    def memory_gb(self):
        """Predicted peak allocated memory per GPU (torch.cuda.max_memory_allocated()), GB (10^9 bytes)."""
        return self.to_dict()["memory_bytes"]["total"] / 1e9

    @property
    def reserved_gb(self):
        """Predicted peak reserved memory per GPU (torch.cuda.max_memory_reserved()), GB (10^9 bytes)."""
        return self.to_dict()["memory_bytes"]["reserved"] / 1e9

    @property
    def step_seconds(self):
        """Predicted time of one optimizer step, seconds."""
        return self.to_dict()["step_seconds"]["total"]

    @property
    def mfu(self):
        """Model FLOPs utilisation: model FLOPs per GPU per second over the GPU's dense peak (0-1)."""
        return self.to_dict()["mfu"]

    @property
    def alternatives(self):
        """When the layout does not fit: the nearest layouts that do, fastest first (change, sizes, memory, step)."""
        rows = self.to_dict().get("alternatives", [])
        columns = ["change", "tp", "pp", "dp", "cp", "vpp", "micro_batch", "recompute", "sharding", "gpus",
                   "memory_bytes", "step_seconds"]
        return Table("plan_alternatives", columns, rows)

    @property
    def notes(self):
        """What the planner chose for you (a default it filled in), one line each."""
        return list(self.to_dict().get("notes", []))

    @property
    def memory(self):
        """One row per part of the memory per GPU: ``part``, ``bytes``, ``share`` of the total."""
        m = self.to_dict()["memory_bytes"]
        rows = [{"part": p, "bytes": m[p], "share": m[p] / m["total"] if m["total"] else 0.0} for p in _MEMORY_PARTS]
        return Table("plan_memory", ["part", "bytes", "share"], rows)

    @property
    def step(self):
        """One row per part of the step: ``part``, ``seconds``, ``share`` of the step."""
        s = self.to_dict()["step_seconds"]
        rows = [{"part": p, "seconds": s[p], "share": s[p] / s["total"] if s["total"] else 0.0} for p in _STEP_PARTS]
        return Table("plan_step", ["part", "seconds", "share"], rows)


class PlanSearchReport(_TextDocument):
    """What ``stepscope plan search`` finds: the fastest layouts that fit memory."""

    def to_text(self):
        return self._native.text()

    def __repr__(self):
        d = self.to_dict()
        return (f"<stepscope.PlanSearchReport {d['model']} on {d['gpus']} x {d['gpu']}: "
                f"{d['fitting']} of {d['candidates']} layouts fit>")

    @property
    def notes(self):
        """What the planner chose for you (the default global batch), one line each."""
        return list(self.to_dict().get("notes", []))

    @property
    def candidates(self):
        """Valid layouts evaluated."""
        return self.to_dict()["candidates"]

    @property
    def fitting(self):
        """Of those, the layouts that fit memory."""
        return self.to_dict()["fitting"]

    @property
    def top(self):
        """The fastest fitting layouts, fastest first: sizes, settings, memory, step, tokens/s, MFU."""
        rows = self.to_dict()["top"]
        columns = ["tp", "pp", "dp", "cp", "vpp", "micro_batch", "sequence_parallel", "recompute", "sharding",
                   "cpu_offload", "memory_bytes", "step_seconds", "tokens_per_second", "mfu"]
        return Table("plan_search", columns, rows)

    @property
    def best(self):
        """The fastest fitting layout as a dict, or None when none fits."""
        rows = self.top.rows
        return rows[0] if rows else None


def _fill(target, **values):
    """Sets the native inputs' fields; a value of the wrong type or size is an OptionError naming the keyword."""
    for name, value in values.items():
        try:
            setattr(target, name, value)
        except TypeError:
            kind = type(getattr(target, name)).__name__
            expected = {"int": "a whole number that fits 32 bits", "str": "a string", "bool": "True or False",
                        "float": "a number"}[kind]
            raise OptionError(f"{name}: expected {expected}, got {value!r}") from None


def _model_inputs(inputs, model, gpu, profile, global_batch, seq, activation_bits, dtype, optimizer, attention,
                  stack, compile, optimizer_impl, tp_overlap=False, fp8_all_gather=False, moe_capacity_factor=0.0,
                  moe_pad_to_capacity=False, cuda_graphs=False, fp8_impl="auto", fsdp_flat_params=False,
                  reshard_after_forward=True, attention_density=0.0):
    _fill(inputs, model=os.fspath(model), seq=seq or 0, gpu=gpu, profile=os.fspath(profile) if profile else "",
          global_batch=global_batch or 0, activation_bits=activation_bits, dtype=dtype, optimizer=optimizer,
          attention=attention, stack=stack, compile=compile, optimizer_impl=optimizer_impl, tp_overlap=tp_overlap,
          fp8_all_gather=fp8_all_gather, moe_capacity_factor=moe_capacity_factor,
          moe_pad_to_capacity=moe_pad_to_capacity, cuda_graphs=cuda_graphs, fp8_impl=fp8_impl,
          fsdp_flat_params=fsdp_flat_params, reshard_after_forward=reshard_after_forward,
          attention_density=attention_density)


def plan(model, *, gpu="h100-sxm", profile=None, gpus=None, tp=1, pp=1, dp=None, cp=1, vpp=1, micro_batch=1,
         global_batch=None, seq=None, recompute="none", sharding="ddp", sequence_parallel=False, cpu_offload=False,
         dtype="bf16", optimizer="adamw", activation_bits=16, attention="flash", overlap_dp=True, grad_fp32=False,
         stack="megatron", compile=False, optimizer_impl="auto", ep=1, first_stage_layers=0, last_stage_layers=0,
         recompute_layers=0, tp_overlap=False, fp8_all_gather=False, offload_layers=0, moe_capacity_factor=0.0,
         moe_pad_to_capacity=False, cuda_graphs=False, fp8_impl="auto", fsdp_flat_params=False,
         reshard_after_forward=True, account_for_embedding=False, account_for_loss=False, attention_density=0.0):
    """Predicts memory per GPU and step time of one training layout; returns a :class:`PlanReport`.

    ``model``: a preset (``"gpt3-175b"``, ``"llama3-70b"``, ...) or a model
    JSON file. ``gpu``: a catalog name, or ``profile``: a hardware profile
    JSON. ``gpus`` defaults to tp × pp × dp × cp; ``dp`` to the GPUs that
    tp × pp × cp leave of ``gpus`` (else 1); ``global_batch`` to
    dp × micro_batch; ``seq`` to the model's own. When the layout does not
    fit, ``alternatives`` lists the nearest that do. The other keywords are ``stepscope plan``'s options
    (docs/planner.md).
    """
    from . import _stepscope

    inputs = _stepscope.PlanInputs()
    _model_inputs(inputs, model, gpu, profile, global_batch, seq, activation_bits, dtype, optimizer, attention,
                  stack, compile, optimizer_impl, tp_overlap, fp8_all_gather, moe_capacity_factor, moe_pad_to_capacity,
                  cuda_graphs, fp8_impl, fsdp_flat_params, reshard_after_forward, attention_density)
    _fill(inputs.layout, tp=tp, pp=pp, dp=1 if dp is None else dp, cp=cp, vpp=vpp, sharding=sharding, ep=ep,
          first_stage_layers=first_stage_layers, last_stage_layers=last_stage_layers,
          account_for_embedding=account_for_embedding, account_for_loss=account_for_loss,
          sequence_parallel=sequence_parallel, cpu_offload=cpu_offload)
    _fill(inputs, dp_from_gpus=dp is None, gpus=gpus or 0, micro_batch=micro_batch, recompute=recompute,
          recompute_layers=recompute_layers, offload_layers=offload_layers,
          overlap_dp=overlap_dp, grad_fp32=grad_fp32)
    return PlanReport(raise_for(_stepscope.plan(inputs)))


def plan_search(model, gpus, *, global_batch=None, seq=None, gpu="h100-sxm", profile=None, top=10, dtype="bf16",
                optimizer="adamw", activation_bits=16, attention="flash", stack="megatron", compile=False,
                optimizer_impl="auto"):
    """The ``top`` fastest layouts of ``gpus`` GPUs that fit memory; returns a :class:`PlanSearchReport`.

    Every valid layout (tp, pp, dp, cp, virtual stages, micro-batch,
    recomputation, sharding, sequence parallelism) is scored with the models
    of :func:`plan`. ``global_batch``: sequences per step (default: about
    4M tokens, a multiple of ``gpus``; ``notes`` says what was chosen).
    """
    from . import _stepscope

    inputs = _stepscope.SearchInputs()
    _model_inputs(inputs, model, gpu, profile, global_batch, seq, activation_bits, dtype, optimizer, attention,
                  stack, compile, optimizer_impl)
    _fill(inputs, gpus=gpus, top=top)
    return PlanSearchReport(raise_for(_stepscope.plan_search(inputs)))
