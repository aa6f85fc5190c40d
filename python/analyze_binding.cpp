// Python binding of the analysis pipeline (src/pipeline/analyze_run.h) and of
// the renderers of its report. A failed run is returned, not raised: the
// Python side (stepscope/errors.py) raises its own exception classes with the
// file and byte offset the library names. The trace reading and analysis run
// without the GIL: other Python threads go on meanwhile.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "pipeline/analyze_run.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/perfetto_report.h"
#include "report/terminal_report.h"

namespace py = pybind11;

namespace stepscope::python {

namespace {

using pipeline::AnalyzedRun;

std::unique_ptr<AnalyzedRun> analyze(const std::vector<std::string>& inputs, const std::string& compat,
                                     const std::string& profile, unsigned threads, bool salvage,
                                     const std::vector<std::string>& disabled_detectors,
                                     std::optional<double> unprofiled_step_ms,
                                     const std::vector<std::string>& what_if, bool replay, int top,
                                     const std::vector<std::string>& memory_snapshots) {
  pipeline::RunOptions o;
  o.read.salvage = salvage;
  o.threads = threads;
  o.analysis.top_kernels = top;
  o.compat = compat;
  o.hardware_profile_path = profile;
  o.diagnosis.disabled_detectors = disabled_detectors;
  o.diagnosis.unprofiled_step_ms = unprofiled_step_ms;
  o.diagnosis.what_if = what_if;
  o.diagnosis.replay = replay;
  o.memory_snapshots = memory_snapshots;
  // The interpreter's process is the user's: its malloc settings stay theirs.
  o.tune_allocator = false;
  py::gil_scoped_release unlocked;
  return std::make_unique<AnalyzedRun>(pipeline::analyze_run(inputs, o));
}

std::string terminal_text(const AnalyzedRun& run, size_t top) {
  report::TerminalOptions o;
  o.top_kernels = top;
  return report::render_terminal(run.report, o);
}

// Empty on success, else the one-line error naming the file.
std::string write_perfetto(const AnalyzedRun& run, const std::string& path) {
  py::gil_scoped_release unlocked;
  report::PerfettoResult r = report::write_perfetto(run.report, path);
  return r.ok ? std::string() : r.error;
}

}  // namespace

void bind_analyze(py::module_& m) {
  py::class_<AnalyzedRun>(m, "AnalyzedRun", "A trace set read, analysed and diagnosed by the C++ library")
      .def_readonly("ok", &AnalyzedRun::ok)
      .def_readonly("error", &AnalyzedRun::error)
      .def_readonly("error_file", &AnalyzedRun::error_file)
      .def_readonly("error_byte", &AnalyzedRun::error_byte)
      .def_readonly("bad_option", &AnalyzedRun::bad_option)
      .def_property_readonly("warnings", [](const AnalyzedRun& r) { return pipeline::warnings_to_show(r); })
      .def_property_readonly("read_seconds", [](const AnalyzedRun& r) { return r.report.read_seconds; })
      .def_property_readonly("analysis_seconds", [](const AnalyzedRun& r) { return r.report.analysis_seconds; })
      .def(
          "json", [](const AnalyzedRun& r, int indent) { return report::build_analyze_json(r.report).dump(indent); },
          py::arg("indent") = -1, "The JSON report (docs/json_schema.md) as text")
      .def(
          "html", [](const AnalyzedRun& r) { return report::render_html(r.report); },
          "The self-contained HTML report")
      .def("text", &terminal_text, py::arg("top") = 10, "The terminal report")
      .def("write_perfetto", &write_perfetto, py::arg("path"),
           "Writes the Perfetto trace; returns '' or the one-line error");

  m.def("analyze", &analyze, py::arg("inputs"), py::arg("compat") = "", py::arg("profile") = "",
        py::arg("threads") = 0, py::arg("salvage") = false, py::arg("disabled_detectors") = std::vector<std::string>{},
        py::arg("unprofiled_step_ms") = std::nullopt, py::arg("what_if") = std::vector<std::string>{},
        py::arg("replay") = true, py::arg("top") = 10, py::arg("memory_snapshots") = std::vector<std::string>{},
        "Reads, analyses and diagnoses trace files, folders or globs (one file per rank)");
}

}  // namespace stepscope::python
