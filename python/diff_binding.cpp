// Python binding of `stepscope diff` (src/pipeline/diff_run.h): both runs,
// their diff and the --fail-if gate. As for analyze, a failed run is
// returned and stepscope/errors.py raises; the reading runs without the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "pipeline/diff_run.h"
#include "report/diff_json.h"
#include "report/diff_report.h"

namespace py = pybind11;

namespace stepscope::python {

namespace {

using pipeline::DiffedRuns;

std::unique_ptr<DiffedRuns> diff(const std::vector<std::string>& before, const std::vector<std::string>& after,
                                 const std::vector<std::string>& fail_if, unsigned threads, bool salvage,
                                 const std::vector<std::string>& disabled_detectors, int top) {
  pipeline::RunOptions o;
  o.read.salvage = salvage;
  o.threads = threads;
  o.diagnosis.disabled_detectors = disabled_detectors;
  o.tune_allocator = false;  // the interpreter's process is the user's
  diff::DiffOptions d;
  d.top_kernels = static_cast<size_t>(top);
  py::gil_scoped_release unlocked;
  return std::make_unique<DiffedRuns>(pipeline::diff_run(before, after, o, d, fail_if));
}

}  // namespace

void bind_diff(py::module_& m) {
  py::class_<DiffedRuns>(m, "DiffedRuns", "Two trace sets analysed and compared by the C++ library")
      .def_readonly("ok", &DiffedRuns::ok)
      .def_readonly("error", &DiffedRuns::error)
      .def_readonly("error_file", &DiffedRuns::error_file)
      .def_readonly("error_byte", &DiffedRuns::error_byte)
      .def_readonly("bad_option", &DiffedRuns::bad_option)
      .def_readonly("before", &DiffedRuns::before, py::return_value_policy::reference_internal)
      .def_readonly("after", &DiffedRuns::after, py::return_value_policy::reference_internal)
      .def_property_readonly("warnings", [](const DiffedRuns& r) { return r.report.warnings; })
      .def_property_readonly("gate_failed", [](const DiffedRuns& r) { return r.report.gate && r.report.gate->failed; })
      .def_property_readonly("verdict",
                             [](const DiffedRuns& r) { return r.report.gate ? r.report.gate->line : std::string(); })
      .def(
          "json", [](const DiffedRuns& r, int indent) { return report::build_diff_json(r.report).dump(indent); },
          py::arg("indent") = -1, "The diff JSON (docs/json_schema.md, stepscope.diff) as text")
      .def(
          "text", [](const DiffedRuns& r) { return report::render_diff_terminal(r.report); }, "The terminal report");

  m.def("diff", &diff, py::arg("before"), py::arg("after"), py::arg("fail_if") = std::vector<std::string>{},
        py::arg("threads") = 0, py::arg("salvage") = false,
        py::arg("disabled_detectors") = std::vector<std::string>{}, py::arg("top") = 10,
        "Analyses both trace sets and compares them; fail_if conditions make a CI gate");
}

}  // namespace stepscope::python
