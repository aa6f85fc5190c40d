// Python binding of rank summaries (src/summary/) and their merge
// (src/pipeline/merge_run.h), for stepscope.distributed: workers summarize
// the ranks they are given and return the summary's bytes; the merge turns
// the bytes into a report with the same methods as an analysed run. The work
// runs without the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "pipeline/analyze_run.h"
#include "pipeline/merge_run.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/terminal_report.h"
#include "summary/summarize.h"
#include "summary/summary_file.h"

namespace py = pybind11;

namespace stepscope::python {

namespace {

using pipeline::MergedRun;

// (ok, error, error_file, summary bytes)
py::tuple summarize(const std::vector<std::string>& inputs, bool member_of_set, bool salvage, int top,
                    const std::string& display_path, size_t ranks_in_set) {
  summary::SummarizeOptions o;
  o.ranks_in_set = ranks_in_set;
  o.member_of_set = member_of_set;
  o.display_path = display_path;
  o.read.salvage = salvage;
  o.analysis.top_kernels = top;
  summary::SummarizeResult r;
  std::string bytes;
  {
    py::gil_scoped_release unlocked;
    r = summary::summarize_rank(inputs, o);
    if (r.ok) bytes = summary::encode_summary(r.summary);
  }
  return py::make_tuple(r.ok, r.error, r.error_file, py::bytes(bytes));
}

py::bytes unreadable(const std::string& path, const std::string& error, bool salvage, int top) {
  summary::SummarizeOptions o;
  o.read.salvage = salvage;
  o.analysis.top_kernels = top;
  return py::bytes(summary::encode_summary(summary::unreadable_rank(path, error, o)));
}

// Decodes every summary (naming the first bad one) and merges them.
std::unique_ptr<MergedRun> merge(const std::vector<py::bytes>& blobs, const std::vector<std::string>& names,
                                 const std::vector<std::string>& inputs) {
  std::vector<std::string> raw;
  raw.reserve(blobs.size());
  for (const py::bytes& b : blobs) raw.push_back(std::string(b));
  py::gil_scoped_release unlocked;
  std::vector<pipeline::NamedSummary> named;
  for (size_t i = 0; i < raw.size(); ++i) {
    const std::string name = i < names.size() ? names[i] : "summary " + std::to_string(i);
    summary::DecodedSummary d = summary::decode_summary(raw[i]);
    std::string().swap(raw[i]);  // the bytes are not needed past decoding
    if (!d.ok) {
      auto m = std::make_unique<MergedRun>();
      m->error = name + ": " + d.error;
      m->error_file = name;
      return m;
    }
    named.push_back({name, std::move(d.summary)});
  }
  return std::make_unique<MergedRun>(pipeline::merge_summaries(std::move(named), inputs));
}

std::string terminal_text(const MergedRun& m, size_t top) {
  report::TerminalOptions o;
  o.top_kernels = top;
  return report::render_terminal(m.report, o);
}

}  // namespace

void bind_summary(py::module_& m) {
  // The same members as AnalyzedRun, so stepscope.Report takes either.
  py::class_<MergedRun>(m, "MergedRun", "A report merged from rank summaries by the C++ library")
      .def_readonly("ok", &MergedRun::ok)
      .def_readonly("error", &MergedRun::error)
      .def_readonly("error_file", &MergedRun::error_file)
      .def_property_readonly("error_byte", [](const MergedRun&) { return -1; })
      .def_property_readonly("bad_option", [](const MergedRun&) { return false; })
      .def_property_readonly("warnings", [](const MergedRun& r) { return pipeline::warnings_to_show(r.report); })
      .def_property_readonly("read_seconds", [](const MergedRun& r) { return r.report.read_seconds; })
      .def_property_readonly("analysis_seconds", [](const MergedRun& r) { return r.report.analysis_seconds; })
      .def_property_readonly("diagnosed", [](const MergedRun& r) { return r.report.diagnosis.has_value(); })
      .def(
          "json", [](const MergedRun& r, int indent) { return report::build_analyze_json(r.report).dump(indent); },
          py::arg("indent") = -1, "The JSON report (docs/json_schema.md) as text")
      .def(
          "html", [](const MergedRun& r) { return report::render_html(r.report); }, "The self-contained HTML report")
      .def("text", &terminal_text, py::arg("top") = 10, "The terminal report")
      .def(
          "write_perfetto",
          [](const MergedRun&, const std::string& path) {
            return path + ": a Perfetto trace needs the ranks' events, which summaries do not carry (use analyze)";
          },
          py::arg("path"), "Refused: returns the one-line error");
  m.def("summarize", &summarize, py::arg("inputs"), py::arg("member_of_set") = false, py::arg("salvage") = false,
        py::arg("top") = 10, py::arg("display_path") = "", py::arg("ranks_in_set") = 0,
        "One rank's trace file(s) to summary bytes: (ok, error, error_file, bytes)");
  m.def("unreadable_summary", &unreadable, py::arg("path"), py::arg("error"), py::arg("salvage") = false,
        py::arg("top") = 10, "The summary of a file that could not be read, carrying 'dropped <error>'");
  m.def("merge_summaries", &merge, py::arg("summaries"), py::arg("names"), py::arg("inputs"),
        "Summary bytes of a trace set's ranks to a report (the analyses and cross-rank tables)");
}

}  // namespace stepscope::python
