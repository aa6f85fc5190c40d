// Python binding of the planner's questions (src/pipeline/plan_run.h): the
// inputs as plain objects whose fields the Python side sets from keywords,
// and the answers with their JSON and text. A refused input is returned, not
// raised, with the fields stepscope/errors.py reads (as for analyze); its
// line names the input as Python spells it ("global_batch: ...").
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>
#include <string>

#include "bindings.h"
#include "pipeline/plan_run.h"
#include "report/plan_report.h"

namespace py = pybind11;

namespace stepscope::python {

namespace {

using pipeline::PlanProblem;

std::string python_line(const PlanProblem& p) { return p.option.empty() ? p.message : p.option + ": " + p.message; }

std::string reindent(const std::string& json, int indent) { return nlohmann::json::parse(json).dump(indent); }

// The fields errors.raise_for reads, on each answer type.
template <typename Answer>
void bind_problem(py::class_<Answer>& c) {
  c.def_property_readonly("ok", [](const Answer& a) { return a.problem.ok(); })
      .def_property_readonly("error", [](const Answer& a) { return python_line(a.problem); })
      .def_property_readonly("error_file", [](const Answer& a) { return a.problem.file; })
      .def_property_readonly("error_byte", [](const Answer&) { return -1; })
      .def_property_readonly("bad_option", [](const Answer&) { return true; });
}

}  // namespace

void bind_plan(py::module_& m) {
  using pipeline::LayoutInputs;
  using pipeline::ModelInputs;
  using pipeline::PlanInputs;
  using pipeline::SearchInputs;
  py::class_<ModelInputs>(m, "ModelInputs", "Model, GPU and training settings of a plan question")
      .def(py::init<>())
      .def_readwrite("model", &ModelInputs::model)
      .def_readwrite("gpu", &ModelInputs::gpu)
      .def_readwrite("profile", &ModelInputs::profile)
      .def_readwrite("global_batch", &ModelInputs::global_batch)
      .def_readwrite("seq", &ModelInputs::seq)
      .def_readwrite("activation_bits", &ModelInputs::activation_bits)
      .def_readwrite("dtype", &ModelInputs::dtype)
      .def_readwrite("optimizer", &ModelInputs::optimizer)
      .def_readwrite("attention", &ModelInputs::attention)
      .def_readwrite("stack", &ModelInputs::stack)
      .def_readwrite("compile", &ModelInputs::compiled)
      .def_readwrite("tp_overlap", &ModelInputs::tp_overlap)
      .def_readwrite("fp8_all_gather", &ModelInputs::fp8_all_gather)
      .def_readwrite("optimizer_impl", &ModelInputs::optimizer_impl)
      .def_readwrite("moe_capacity_factor", &ModelInputs::moe_capacity_factor)
      .def_readwrite("moe_pad_to_capacity", &ModelInputs::moe_pad_to_capacity)
      .def_readwrite("cuda_graphs", &ModelInputs::cuda_graphs)
      .def_readwrite("fp8_impl", &ModelInputs::fp8_impl)
      .def_readwrite("fsdp_flat_params", &ModelInputs::fsdp_flat_params)
      .def_readwrite("reshard_after_forward", &ModelInputs::reshard_after_forward)
      .def_readwrite("attention_density", &ModelInputs::attention_density);
  py::class_<LayoutInputs>(m, "LayoutInputs", "One parallel layout")
      .def(py::init<>())
      .def_readwrite("tp", &LayoutInputs::tp)
      .def_readwrite("pp", &LayoutInputs::pp)
      .def_readwrite("dp", &LayoutInputs::dp)
      .def_readwrite("cp", &LayoutInputs::cp)
      .def_readwrite("vpp", &LayoutInputs::vpp)
      .def_readwrite("sequence_parallel", &LayoutInputs::sequence_parallel)
      .def_readwrite("cpu_offload", &LayoutInputs::cpu_offload)
      .def_readwrite("sharding", &LayoutInputs::sharding)
      .def_readwrite("ep", &LayoutInputs::ep)
      .def_readwrite("first_stage_layers", &LayoutInputs::first_stage_layers)
      .def_readwrite("last_stage_layers", &LayoutInputs::last_stage_layers)
      .def_readwrite("account_for_embedding", &LayoutInputs::account_for_embedding)
      .def_readwrite("account_for_loss", &LayoutInputs::account_for_loss);
  py::class_<PlanInputs, ModelInputs>(m, "PlanInputs", "The inputs of stepscope plan")
      .def(py::init<>())
      .def_readwrite("layout", &PlanInputs::layout)
      .def_readwrite("dp_from_gpus", &PlanInputs::dp_from_gpus)
      .def_readwrite("gpus", &PlanInputs::gpus)
      .def_readwrite("micro_batch", &PlanInputs::micro_batch)
      .def_readwrite("recompute", &PlanInputs::recompute)
      .def_readwrite("recompute_layers", &PlanInputs::recompute_layers)
      .def_readwrite("offload_layers", &PlanInputs::offload_layers)
      .def_readwrite("grad_fp32", &PlanInputs::grad_fp32)
      .def_readwrite("overlap_dp", &PlanInputs::overlap_dp);
  py::class_<SearchInputs, ModelInputs>(m, "SearchInputs", "The inputs of stepscope plan search")
      .def(py::init<>())
      .def_readwrite("gpus", &SearchInputs::gpus)
      .def_readwrite("top", &SearchInputs::top);

  using pipeline::PlannedLayout;
  py::class_<PlannedLayout> planned(m, "PlannedLayout", "One layout's predicted memory and step time");
  bind_problem(planned);
  planned
      .def(
          "json", [](const PlannedLayout& p, int indent) { return reindent(report::plan_json(p.result), indent); },
          py::arg("indent") = -1, "The JSON of stepscope plan --json")
      .def(
          "text", [](const PlannedLayout& p, bool explain) { return report::plan_text(p.result, explain); },
          py::arg("explain") = false, "The terminal report");
  m.def("plan", &pipeline::plan_layout, py::arg("inputs"), "Predicts one layout (stepscope plan)");

  using pipeline::SearchedLayouts;
  py::class_<SearchedLayouts> searched(m, "SearchedLayouts", "The fastest layouts that fit memory");
  bind_problem(searched);
  searched
      .def(
          "json", [](const SearchedLayouts& s, int indent) { return reindent(report::search_json(s.result), indent); },
          py::arg("indent") = -1, "The JSON of stepscope plan search --json")
      .def(
          "text", [](const SearchedLayouts& s) { return report::search_text(s.result); }, "The terminal report");
  // The search scores every layout (seconds for large GPU counts): without the GIL.
  m.def(
      "plan_search",
      [](const SearchInputs& in) {
        py::gil_scoped_release unlocked;
        return pipeline::search_layouts(in);
      },
      py::arg("inputs"), "Searches the layouts of a GPU count (stepscope plan search)");
}

}  // namespace stepscope::python
