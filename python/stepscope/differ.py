"""``stepscope.diff``: two trace sets compared by the C++ library, and the CI gate."""

import os

from .errors import raise_for, warn_all
from .report import JsonDocument, Report
from .table import Table


class DiffReport(JsonDocument):
    """What ``stepscope diff BEFORE AFTER`` reports (docs/json_schema.md, ``stepscope.diff``)."""

    def to_text(self):
        return self._native.text()

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        s = self.to_dict()["step_us"]
        return f"<stepscope.DiffReport step {s['before'] / 1000:.3f} -> {s['after'] / 1000:.3f} ms>"

    @property
    def before(self):
        """The before run's own :class:`Report`."""
        return Report(self._native.before)

    @property
    def after(self):
        return Report(self._native.after)

    @property
    def step_time(self):
        """Mean step: ``before``, ``after``, ``change`` (µs) and ``change_pct``."""
        return dict(self.to_dict()["step_us"])

    @property
    def attribution(self):
        """One row per bucket: time per step and share before and after."""
        rows = []
        for b in self.to_dict()["attribution"]:
            rows.append({"bucket": b["bucket"], "before_us": b["us_per_step"]["before"],
                         "after_us": b["us_per_step"]["after"], "change_us": b["us_per_step"]["change"],
                         "before_pct": b["share_pct"]["before"], "after_pct": b["share_pct"]["after"]})
        return Table("attribution_diff", ["bucket", "before_us", "after_us", "change_us", "before_pct", "after_pct"],
                     rows)

    @property
    def findings(self):
        """One row per matched finding: change (resolved, new, persisting), category, savings."""
        rows = []
        for f in self.to_dict()["findings"]["items"]:
            b, a = f.get("before") or {}, f.get("after") or {}
            rows.append({"change": f["change"], "category": f["category"], "before_saving_us": b.get("saving_us"),
                         "after_saving_us": a.get("saving_us"), "title": (a or b).get("title")})
        return Table("findings_diff", ["change", "category", "before_saving_us", "after_saving_us", "title"], rows)

    @property
    def failed(self):
        """True when a ``fail_if`` condition holds."""
        return self._native.gate_failed

    @property
    def verdict(self):
        """The gate's one line ("FAIL: ..." or "pass: ..."), or "" without conditions."""
        return self._native.verdict


def diff(before, after, *, fail_if=(), threads=0, salvage=False, disable_detectors=(), top=10):
    """Analyses both trace sets (files, folders, globs, or lists of them) and compares them.

    ``fail_if``: conditions of ``stepscope diff --fail-if`` (e.g.
    ``"step_time>+5%"``, ``"new_finding>=medium"``); the result's ``failed``
    and ``verdict`` say whether one holds (docs/ci_gate.md). Errors as for
    :func:`stepscope.analyze`; a bad condition is an :class:`OptionError`.
    """
    from . import _stepscope

    def paths(p):
        return [os.fspath(x) for x in ([p] if isinstance(p, (str, os.PathLike)) else p)]

    native = _stepscope.diff(paths(before), paths(after), fail_if=list(fail_if), threads=threads, salvage=salvage,
                             disabled_detectors=list(disable_detectors), top=top)
    raise_for(native)
    warn_all(native.warnings)
    return DiffReport(native)
