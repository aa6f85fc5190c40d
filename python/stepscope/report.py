"""The analysis of a trace set, as Python objects over the C++ library's report.

A :class:`Report` holds the native run (stores, analyses, diagnosis) and reads
its JSON report (docs/json_schema.md) once, on first use; every attribute is
a view of that document, so the Python figures are the CLI's figures.
"""

import html
import json
import os
from dataclasses import dataclass, field

from .errors import Error
from .table import Table


@dataclass
class Finding:
    """One diagnosed cause of lost step time (docs/findings.md)."""

    category: str
    title: str
    severity: str
    confidence: str
    saving_us: float  # estimated saving in the run without the profiler, µs per step
    saving_pct: float  # the same as % of that rank's step
    saving_basis: str  # "replay" or "bound" (docs/whatif.md, "Savings")
    bound_saving_us: float
    remedy: str
    evidence: dict
    detector: str
    rank: int
    raw: dict = field(repr=False)

    @classmethod
    def from_json(cls, f):
        return cls(
            category=f["category"],
            title=f["title"],
            severity=f.get("severity", ""),
            confidence=f.get("confidence", ""),
            saving_us=f.get("estimated_saving_us", 0.0),
            saving_pct=f.get("estimated_saving_pct", 0.0),
            saving_basis=f.get("saving_basis", "bound"),
            bound_saving_us=f.get("bound_saving_us", 0.0),
            remedy=f.get("remedy", ""),
            evidence=f.get("evidence", {}),
            detector=f.get("detector", ""),
            rank=f.get("saving_rank", 0),
            raw=f,
        )


class JsonDocument:
    """A native result read through its JSON report, parsed once on first use."""

    def __init__(self, native):
        self._native = native
        self._doc = None

    def to_dict(self):
        """The JSON report as Python objects (docs/json_schema.md)."""
        if self._doc is None:
            self._doc = json.loads(self._native.json())
        return self._doc

    def to_json(self, indent=None):
        """The JSON report as text (the same document as the CLI's ``--json``)."""
        return self._native.json(-1 if indent is None else indent)


class Report(JsonDocument):
    """What ``stepscope analyze`` reports, for one trace set (one file per rank)."""

    def to_text(self, top=10):
        """The terminal report."""
        return self._native.text(top)

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        d = self.to_dict()
        if "primary_bottleneck" not in d:
            return f"<stepscope.Report {len(d['ranks'])} rank(s), no diagnosis>"
        return f"<stepscope.Report {len(d['ranks'])} rank(s), primary bottleneck: {d['primary_bottleneck']}>"

    def to_html(self, path=None):
        """The self-contained HTML report: written to ``path`` (returned), or returned as text."""
        page = self._native.html()
        if path is None:
            return page
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
        return os.fspath(path)

    def to_perfetto(self, path):
        """The trace with the findings, for ui.perfetto.dev (``.gz``: gzip); returns ``path``."""
        error = self._native.write_perfetto(os.fspath(path))
        if error:
            raise Error(error, os.fspath(path))
        return os.fspath(path)

    def _repr_html_(self):
        # The report page in an iframe: its styles and scripts stay inside it
        # and cannot change the notebook around it.
        page = html.escape(self._native.html(), quote=True)
        return (
            f'<iframe srcdoc="{page}" style="width:100%;height:720px;border:1px solid #ddd" '
            'sandbox="allow-scripts"></iframe>'
        )

    # --- the diagnosis ------------------------------------------------------
    @property
    def primary_bottleneck(self):
        """The category of the finding that saves most, or "none"."""
        self._require_diagnosis()
        return self.to_dict()["primary_bottleneck"]

    @property
    def findings(self):
        """Reported findings (at least 5% of the step), largest saving first."""
        return [Finding.from_json(f) for f in self._diagnosis().get("findings", [])]

    @property
    def minor_findings(self):
        """Findings below the reporting threshold."""
        return [Finding.from_json(f) for f in self._diagnosis().get("minor_findings", [])]

    @property
    def combined_saving_us(self):
        """All reported remedies replayed together, µs per step (never above the step), or None.

        A report merged from rank summaries raises :class:`Error`: replaying
        the remedies together needs each rank's step graph (docs/distributed.md).
        """
        if self._merged():
            raise Error("the combined saving of the reported findings is not made from rank summaries (their "
                        "remedies replayed together need each rank's step graph, which stays with its trace): "
                        "use stepscope.analyze for it")
        return self._diagnosis().get("combined_saving_us")

    @property
    def warnings(self):
        return list(self.to_dict().get("warnings", []))

    @property
    def notes(self):
        return list(self.to_dict().get("notes", []))

    # --- tables -------------------------------------------------------------
    @property
    def attribution(self):
        """Step time by bucket: one row per rank, step and bucket (docs/metrics.md)."""
        self._require_diagnosis()
        rows = []
        for rank, r in self._ranks():
            for s in r["attribution"].get("steps", []):
                for bucket, v in s["buckets"].items():
                    rows.append({"rank": rank, "step": s["step"], "bucket": bucket, "us": v["us"], "pct": v["pct"]})
        return Table("attribution", ["rank", "step", "bucket", "us", "pct"], rows)

    @property
    def steps(self):
        """One row per rank and step: CPU and GPU spans and the step's GPU time breakdown."""
        rows = []
        for rank, r in self._ranks():
            for s in r.get("steps", []):
                row = {"rank": rank, **{k: v for k, v in s.items() if k != "temporal_breakdown"}}
                row.update({f"gpu_{k}": v for k, v in s.get("temporal_breakdown", {}).items()})
                rows.append(row)
        return Table("steps", _columns(rows, ["rank", "step"]), rows)

    @property
    def kernels(self):
        """The top kernels of each type per rank (``top`` per type)."""
        rows = [{"rank": rank, **k} for rank, r in self._ranks() for k in r.get("top_kernels", [])]
        return Table("kernels", _columns(rows, ["rank", "name", "type", "count", "total_us"]), rows)

    @property
    def kernels_across_ranks(self):
        """Kernels pooled over every rank, with p50/p90/p99 within 1% (docs/metrics.md); empty for one rank."""
        multi = self.to_dict().get("multi_rank") or {}
        rows = (multi.get("kernels") or {}).get("top", [])
        return Table("kernels_across_ranks", _columns(rows, ["name", "type", "ranks", "count", "total_us"]), rows)

    @property
    def idle(self):
        """GPU idle time per rank, device and stream, by cause (docs/metrics.md, "Idle")."""
        rows = [{"rank": rank, **i} for rank, r in self._ranks() for i in r.get("idle_breakdown", [])]
        return Table("idle", _columns(rows, ["rank", "device", "stream"]), rows)

    @property
    def critical_path(self):
        """Per rank and step, the critical path's time by category (docs/whatif.md)."""
        self._require_diagnosis()
        rows = []
        for rank, r in self._ranks():
            for s in (r.get("critical_path") or {}).get("steps", []):
                for cat, us in s.get("by_category", {}).items():
                    rows.append({"rank": rank, "step": s["step"], "category": cat, "us": us,
                                 "pct": s.get("share_pct", {}).get(cat)})
        return Table("critical_path", ["rank", "step", "category", "us", "pct"], rows)

    def _diagnosis(self):
        self._require_diagnosis()
        return self.to_dict().get("diagnosis") or {}

    def _merged(self):
        # Only a run merged from rank summaries says whether it was diagnosed.
        return hasattr(self._native, "diagnosed")

    def _require_diagnosis(self):
        # A report without a diagnosis: an empty list of findings would read
        # as a healthy run.
        if not getattr(self._native, "diagnosed", True):
            raise Error("this report has no diagnosis (findings, attribution, critical path): use stepscope.analyze "
                        "for it")

    def _ranks(self):
        return [(r.get("rank", i), r) for i, r in enumerate(self.to_dict().get("ranks", []))]


def _columns(rows, first):
    """``first`` (those present), then every other key in first-seen order."""
    seen = [c for c in first if any(c in r for r in rows)]
    for r in rows:
        for k in r:
            if k not in seen:
                seen.append(k)
    return seen
