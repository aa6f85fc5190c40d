"""stepscope: find, size and remove the bottlenecks of GPU training steps.

``stepscope.analyze(paths)`` reads PyTorch profiler traces (one file per rank)
with the C++ library and returns a :class:`Report`; ``stepscope.diff``
compares two runs, ``stepscope.plan`` and ``plan_search`` predict layouts
before they run, ``stepscope.memory`` reads a PyTorch memory snapshot; ``stepscope.profile`` records traces with the settings the
diagnosis needs (docs/python.md). The native module and pandas load only
when first needed: importing stepscope stays quick.
"""

from .errors import Error, OptionError, StepscopeWarning, TraceError

__all__ = ["analyze", "Report", "Finding", "Table", "diff", "DiffReport", "plan", "plan_search", "PlanReport",
           "PlanSearchReport", "profile", "record", "Recorder", "Error", "TraceError", "OptionError",
           "StepscopeWarning", "memory", "MemoryReport"]
__version__ = "0.1.0"

_LAZY = {
    "analyze": (".analyzer", "analyze"),
    "Report": (".report", "Report"),
    "Finding": (".report", "Finding"),
    "Table": (".table", "Table"),
    "diff": (".differ", "diff"),
    "DiffReport": (".differ", "DiffReport"),
    "plan": (".planner", "plan"),
    "plan_search": (".planner", "plan_search"),
    "PlanReport": (".planner", "PlanReport"),
    "PlanSearchReport": (".planner", "PlanSearchReport"),
    "profile": (".recorder", "profile"),
    "record": (".recorder", "record"),
    "Recorder": (".recorder", "Recorder"),
    "memory": (".memory", "memory"),
    "MemoryReport": (".memory", "MemoryReport"),
}


# Submodules reachable as attributes (stepscope.distributed.analyze), loaded on first use.
_SUBMODULES = ("distributed",)


def __getattr__(name):
    # Module-level lazy attributes (PEP 562): each loads its module on first use.
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module("." + name, __name__)
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module, __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'stepscope' has no attribute '{name}'")
