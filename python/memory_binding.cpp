// Python binding of `stepscope memory` (src/trace/snapshot/ reads,
// src/memory/ analyses): a snapshot read and reported by the C++ library.
// As for analyze, a failed read is returned and stepscope/errors.py raises;
// the reading runs without the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "pipeline/memory_run.h"
#include "report/memory_json.h"
#include "report/memory_terminal.h"

namespace py = pybind11;

namespace stepscope::python {

namespace {

// What one read gives Python: the same fields raise_for() expects of a run.
struct MemoryRun {
  bool ok = false;
  std::string error, error_file;
  int64_t error_byte = -1;
  bool bad_option = false;
  pipeline::MemoryRun run;
  std::vector<std::string> warnings;
};

std::unique_ptr<MemoryRun> read_memory(const std::string& path, int top, const std::string& trace_path) {
  auto run = std::make_unique<MemoryRun>();
  py::gil_scoped_release unlocked;
  run->run = pipeline::run_memory(path, trace_path, static_cast<size_t>(top));
  run->ok = run->run.ok;
  run->error = run->run.error;
  run->error_file = run->run.error_file;
  run->error_byte = run->run.error_byte;
  for (const auto& w : run->run.report.warnings)
    run->warnings.push_back(path + ": " + w.what + " x" + std::to_string(w.count) + " (first at offset " +
                            std::to_string(w.first_offset) + ")");
  return run;
}

}  // namespace

void bind_memory(py::module_& m) {
  py::class_<MemoryRun>(m, "MemoryRun", "A memory snapshot read and reported by the C++ library")
      .def_readonly("ok", &MemoryRun::ok)
      .def_readonly("error", &MemoryRun::error)
      .def_readonly("error_file", &MemoryRun::error_file)
      .def_readonly("error_byte", &MemoryRun::error_byte)
      .def_readonly("bad_option", &MemoryRun::bad_option)
      .def_readonly("warnings", &MemoryRun::warnings)
      .def(
          "json", [](const MemoryRun& r, int indent) { return report::build_memory_json(r.run.report, r.run.findings).dump(indent); },
          py::arg("indent") = -1, "The memory JSON (docs/json_schema.md, stepscope memory) as text")
      .def(
          "text", [](const MemoryRun& r, int top) { return report::render_memory_terminal(r.run.report, static_cast<size_t>(top), r.run.findings); },
          py::arg("top") = 10, "The terminal report");
  m.def("memory", &read_memory, py::arg("path"), py::arg("top") = 20, py::arg("trace") = std::string(),
        "Reads a PyTorch memory snapshot (the pickle of torch.cuda.memory._dump_snapshot())");
}

}  // namespace stepscope::python
