"""Paths the Python tests share: the repository's examples and the CLI to
compare with (ctest sets STEPSCOPE_CLI; an installed wheel puts `stepscope`
on PATH)."""

import os
import shutil

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(REPO, "examples")
WORKLOAD_LABELS = os.path.join(REPO, "workloads", "labels.json")


def example(name):
    return os.path.join(EXAMPLES, name)


def cli():
    """The native CLI to compare with, or None."""
    path = os.environ.get("STEPSCOPE_CLI") or shutil.which("stepscope")
    return path if path and os.path.exists(path) else None


def stable(doc):
    """The report without what changes between runs (timings, absolute paths)."""
    doc = dict(doc)
    for key in ("read_seconds", "analysis_seconds", "inputs"):
        doc.pop(key, None)
    doc["ranks"] = [{k: v for k, v in r.items() if k != "file"} for r in doc["ranks"]]
    if "diagnosis" in doc:
        doc["diagnosis"] = {k: v for k, v in doc["diagnosis"].items() if k != "detectors"}
    return doc
