#include "report/plan_report.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "report/text_table.h"

namespace stepscope::report {
namespace {

using model::to_string;
using plan::FitAlternative;
using plan::LayoutSearchResult;
using plan::PlanResult;
using plan::ValidationSummary;

std::string gb(double bytes) { return fmt::format("{:.2f}", bytes / 1e9); }
std::string sec(double s) { return fmt::format("{:.4f}", s); }

void add_time(TextTable& t, const char* what, double seconds, double total) {
  t.add_row({what, sec(seconds), fmt::format("{:.1f}%", total > 0 ? seconds / total * 100 : 0)});
}

}  // namespace

namespace {

std::string notes_text(const std::vector<std::string>& notes) {
  std::string out;
  for (const auto& n : notes) out += "  note: " + n + "\n";
  return out;
}

std::string alternatives_text(const std::vector<FitAlternative>& alternatives) {
  if (alternatives.empty())
    return "  no layout within a few changes fits: `stepscope plan search --gpus N` searches them all\n";
  TextTable t;
  t.add_column("nearest layouts that fit", TextTable::Align::kLeft);
  t.add_column("GB");
  t.add_column("step s");
  for (const auto& a : alternatives)
    t.add_row({a.change, gb(a.memory_bytes), sec(a.step_seconds)});
  return "\n" + t.render();
}

nlohmann::ordered_json alternatives_json(const std::vector<FitAlternative>& alternatives) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& a : alternatives) {
    const auto& p = a.layout;
    out.push_back({{"change", a.change},
                   {"tp", p.tp},
                   {"pp", p.pp},
                   {"dp", p.dp},
                   {"cp", p.cp},
                   {"vpp", p.vpp},
                   {"micro_batch", p.micro_batch},
                   {"recompute", std::string(to_string(p.recompute))},
                   {"sharding", std::string(to_string(p.sharding))},
                   {"gpus", a.gpus},
                   {"memory_bytes", a.memory_bytes},
                   {"step_seconds", a.step_seconds}});
  }
  return out;
}

// "peak at the steady state" reads oddly: the Megatron stack's parts are all live at once.
std::string_view peak_words(model::MemoryPeak p) {
  return p == model::MemoryPeak::kSteady ? "steady state (every part live)" : to_string(p);
}

}  // namespace

std::string plan_text(const PlanResult& r, bool explain) {
  const auto& p = r.parallel;
  // The layout's optional parts, in the order the header lists them.
  std::string extras;
  if (p.sequence_parallel) extras += " · sequence parallel";
  if (p.cpu_offload) extras += " · CPU offload";
  if (r.settings.cuda_graphs) extras += " · CUDA graphs";
  if (r.settings.attention_density > 0)
    extras += fmt::format(" · block-sparse attention (density {:g})", r.settings.attention_density);
  if (p.ep > 1 || r.model.is_moe()) {
    extras += fmt::format(" · {} experts, top-{}", r.model.moe_experts, r.model.moe_topk);
    if (r.model.moe_shared_ffn > 0) extras += fmt::format(" + shared {}", r.model.moe_shared_ffn);
    extras += fmt::format(" · ep {}", p.ep);
    if (r.settings.moe_capacity_factor > 0)
      extras += fmt::format(" · capacity {:g}{}", r.settings.moe_capacity_factor,
                            r.settings.moe_pad_to_capacity ? " (padded)" : "");
  }
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0)
    extras += fmt::format(" · stage layers first {} last {}", p.first_stage_layers, p.last_stage_layers);
  if (p.embedding_stage || p.loss_stage)
    extras += fmt::format(" · {} counted as a stage layer",
                          p.embedding_stage && p.loss_stage ? "embedding and loss" : p.embedding_stage ? "embedding" : "loss");
  if (p.offload_layers > 0) extras += fmt::format(" · {} offloaded layers per stage", p.offload_layers);
  if (p.recompute_layers > 0) extras += fmt::format(" · {} recomputed layers per stage", p.recompute_layers);
  std::string out = fmt::format(
      "Plan: {} ({:.2f} B parameters) on {} × {}\n  tp {} · pp {} · dp {} · cp {} · vpp {} · micro-batch {} · global "
      "batch {} × {} tokens · "
      "{} · {} ({}) · {} stack{} · recompute {} · sharding {}{}\n\n",
      r.model.name, r.model.total_params() / 1e9, r.cluster.gpus, r.cluster.gpu.name, p.tp, p.pp, p.dp, p.cp, p.vpp,
      p.micro_batch, r.settings.global_batch, r.model.seq, to_string(r.settings.dtype), to_string(r.settings.optimizer),
      r.settings.foreach_optimizer() ? "foreach" : "fused", to_string(r.settings.stack),
      r.settings.compiled ? " + torch.compile" : "", to_string(p.recompute), to_string(p.sharding), extras);
  const auto& m = r.memory;
  TextTable mem;
  mem.add_column("memory per GPU", TextTable::Align::kLeft);
  mem.add_column("GB");
  mem.add_row({"weights", gb(m.weights)});
  mem.add_row({"gradients", gb(m.gradients)});
  mem.add_row({"optimizer states", gb(m.optimizer)});
  mem.add_row({"activations", gb(m.activations)});
  mem.add_row({"temporary buffers", gb(m.temporary)});
  mem.add_separator();
  mem.add_row({"peak allocated", gb(m.total)});
  mem.add_row({"allocator reserve", gb(m.reserve)});
  mem.add_row({"peak reserved", gb(m.reserved)});
  mem.add_row({"CUDA context + workspaces", gb(m.context)});
  mem.add_row({"device capacity", gb(m.capacity)});
  mem.add_row({m.fits ? "headroom" : "over capacity by", gb(m.fits ? m.headroom : -m.headroom)});
  out += mem.render();
  out += fmt::format("  (pipeline stage {}; peak at the {}; {})\n", m.stage, peak_words(m.peak),
                     m.fits ? "fits" : "DOES NOT FIT");
  if (!m.fits) out += alternatives_text(r.alternatives);
  out += "\n";

  const auto& s = r.step;
  TextTable st;
  st.add_column("step time", TextTable::Align::kLeft);
  st.add_column("seconds");
  st.add_column("share");
  add_time(st, "forward (GEMMs, memory-bound)", s.compute_fwd, s.total);
  add_time(st, "backward (GEMMs, memory-bound)", s.compute_bwd, s.total);
  add_time(st, "attention core", s.attention, s.total);
  add_time(st, "recomputation", s.recompute, s.total);
  add_time(st, "tensor-parallel comm", s.tp_comm, s.total);
  if (s.ep_comm > 0) add_time(st, "expert all-to-all", s.ep_comm, s.total);
  if (s.offload > 0) add_time(st, "activation offload (exposed)", s.offload, s.total);
  if (s.launch > 0) add_time(st, "host launch (GPU waits)", s.launch, s.total);
  if (s.cp_comm > 0) add_time(st, "context-parallel comm", s.cp_comm, s.total);
  add_time(st, "pipeline p2p", s.pp_p2p, s.total);
  add_time(st, "embedding + loss", s.embedding_and_loss, s.total);
  add_time(st, "pipeline bubble", s.bubble, s.total);
  add_time(st, "data-parallel comm (exposed)", s.dp_comm_exposed, s.total);
  add_time(st, "optimizer step", s.optimizer, s.total);
  st.add_separator();
  add_time(st, "total", s.total, s.total);
  out += st.render();
  out += fmt::format("  {} micro-batches per step · model {:.1f} TFLOP/s per GPU · MFU {:.1f}%\n", s.micro_batches,
                     s.model_tflops_per_gpu, s.mfu * 100);
  if (explain) {
    const auto& l = s.layer;
    TextTable lt;
    lt.add_column("one layer, one micro-batch", TextTable::Align::kLeft);
    lt.add_column("forward (ms)");
    lt.add_column("backward (ms)");
    auto ms = [](double x) { return fmt::format("{:.3f}", x * 1e3); };
    lt.add_row({"linear layers (GEMM model)", ms(l.gemm_fwd), ms(l.gemm_bwd)});
    lt.add_row({"attention core", ms(l.attention_fwd), ms(l.attention_bwd)});
    lt.add_row({"elementwise (HBM-bound)", ms(l.elementwise_fwd), ms(l.elementwise_bwd)});
    lt.add_row({"tensor-parallel collectives", ms(l.tp_comm_fwd), ms(l.tp_comm_bwd)});
    if (l.ep_comm_fwd > 0) lt.add_row({"expert all-to-all", ms(l.ep_comm_fwd), ms(l.ep_comm_bwd)});
    if (l.offload_fwd > 0 || l.offload_bwd > 0)
      lt.add_row({"activation offload (exposed)", ms(l.offload_fwd), ms(l.offload_bwd)});
    lt.add_row({"recomputation", "", ms(l.recompute)});
    lt.add_row({"gradient accumulation", "", ms(l.grad_accumulate)});
    if (l.cast_fwd > 0 || l.cast_bwd > 0) lt.add_row({"low-precision casts", ms(l.cast_fwd), ms(l.cast_bwd)});
    if (l.cp_comm > 0) lt.add_row({"context-parallel exposed", "", ms(l.cp_comm)});
    if (l.shard_copy_fwd > 0 || l.shard_copy_bwd > 0)
      lt.add_row({"FSDP2 copy-out of gathered weights", ms(l.shard_copy_fwd), ms(l.shard_copy_bwd)});
    lt.add_separator();
    lt.add_row({"total", ms(l.fwd()), ms(l.bwd())});
    lt.add_row({"host issue time (kernels)", ms(l.launch_fwd), ms(l.launch_bwd)});
    out += "\n";
    out += lt.render();
    out += fmt::format(
        "  layer forward FLOPs {:.3e} (whole TP group) · step model FLOPs {:.3e} · with recomputation {:.3e}\n"
        "  data-parallel comm {:.4f} s in all, {:.4f} s exposed · bubble {:.1f}% of the pipeline time\n",
        s.layer_flops_fwd, s.model_flops, s.hardware_flops, s.dp_comm_total, s.dp_comm_exposed,
        s.bubble_fraction * 100);
  }
  out += notes_text(r.notes);
  return out;
}

std::string plan_json(const PlanResult& r) {
  nlohmann::ordered_json j;
  const auto& p = r.parallel;
  j["model"] = {{"name", r.model.name},
                {"parameters", r.model.total_params()},
                {"layers", r.model.layers},
                {"hidden", r.model.hidden},
                {"heads", r.model.heads},
                {"kv_heads", r.model.kv_heads},
                {"ffn_hidden", r.model.ffn_hidden},
                {"gated_mlp", r.model.gated_mlp},
                {"vocab", r.model.vocab},
                {"seq", r.model.seq}};
  j["cluster"] = {{"gpu", r.cluster.gpu.name}, {"gpus", r.cluster.gpus}};
  j["parallel"] = {{"tp", p.tp},
                   {"pp", p.pp},
                   {"dp", p.dp},
                   {"cp", p.cp},
                   {"vpp", p.vpp},
                   {"micro_batch", p.micro_batch},
                   {"sequence_parallel", p.sequence_parallel},
                   {"recompute", std::string(to_string(p.recompute))},
                   {"sharding", std::string(to_string(p.sharding))},
                   {"cpu_offload", p.cpu_offload},
                   {"ep", p.ep},
                   {"first_stage_layers", p.first_stage_layers},
                   {"last_stage_layers", p.last_stage_layers},
                   {"account_for_embedding", p.embedding_stage},
                   {"account_for_loss", p.loss_stage},
                   {"recompute_layers", p.recompute_layers},
                   {"offload_layers", p.offload_layers}};
  j["settings"] = {{"global_batch", r.settings.global_batch},
                   {"dtype", std::string(to_string(r.settings.dtype))},
                   {"optimizer", std::string(to_string(r.settings.optimizer))},
                   {"activation_bits", r.settings.activation_bits},
                   {"attention", std::string(to_string(r.settings.attention))},
                   {"overlap_dp_comm", r.settings.overlap_dp_comm},
                   {"stack", std::string(to_string(r.settings.stack))},
                   {"compiled", r.settings.compiled},
                   {"tp_comm_overlap", r.settings.tp_comm_overlap},
                   {"fp8_all_gather", r.settings.fp8_all_gather},
                   {"moe_capacity_factor", r.settings.moe_capacity_factor},
                   {"moe_pad_to_capacity", r.settings.moe_pad_to_capacity},
                   {"cuda_graphs", r.settings.cuda_graphs},
                   {"fp8_casts", r.settings.fused_casts() ? "fused" : "eager"},
                   {"fsdp_flat_params", r.settings.fsdp_flat_params},
                   {"reshard_after_forward", r.settings.reshard_after_forward},
                   {"attention_density", r.settings.attention_density},
                   {"optimizer_impl", r.settings.foreach_optimizer() ? "foreach" : "fused"}};
  const auto& m = r.memory;
  j["memory_bytes"] = {{"weights", m.weights},     {"gradients", m.gradients},
                       {"optimizer", m.optimizer}, {"activations", m.activations},
                       {"temporary", m.temporary}, {"total", m.total},
                       {"reserve", m.reserve},     {"reserved", m.reserved},
                       {"context", m.context},     {"capacity", m.capacity},
                       {"headroom", m.headroom},   {"fits", m.fits},
                       {"stage", m.stage},         {"peak", std::string(to_string(m.peak))}};
  const auto& s = r.step;
  const auto& l = s.layer;
  j["step_seconds"] = {{"compute_fwd", s.compute_fwd},
                       {"compute_bwd", s.compute_bwd},
                       {"attention", s.attention},
                       {"recompute", s.recompute},
                       {"tp_comm", s.tp_comm},
                       {"ep_comm", s.ep_comm},
                       {"offload", s.offload},
                       {"launch", s.launch},
                       {"cp_comm", s.cp_comm},
                       {"pp_p2p", s.pp_p2p},
                       {"embedding_and_loss", s.embedding_and_loss},
                       {"bubble", s.bubble},
                       {"dp_comm_total", s.dp_comm_total},
                       {"dp_comm_exposed", s.dp_comm_exposed},
                       {"optimizer", s.optimizer},
                       {"total", s.total}};
  j["layer_seconds"] = {{"gemm_fwd", l.gemm_fwd},
                        {"gemm_bwd", l.gemm_bwd},
                        {"attention_fwd", l.attention_fwd},
                        {"attention_bwd", l.attention_bwd},
                        {"elementwise_fwd", l.elementwise_fwd},
                        {"elementwise_bwd", l.elementwise_bwd},
                        {"tp_comm_fwd", l.tp_comm_fwd},
                        {"tp_comm_bwd", l.tp_comm_bwd},
                        {"recompute", l.recompute},
                        {"cp_comm", l.cp_comm},
                        {"grad_accumulate", l.grad_accumulate},
                        {"cast_fwd", l.cast_fwd},
                        {"cast_bwd", l.cast_bwd},
                        {"ep_comm_fwd", l.ep_comm_fwd},
                        {"ep_comm_bwd", l.ep_comm_bwd},
                        {"total", l.total()}};
  j["micro_batches"] = s.micro_batches;
  j["bubble_fraction"] = s.bubble_fraction;
  j["model_flops"] = s.model_flops;
  j["hardware_flops"] = s.hardware_flops;
  j["model_tflops_per_gpu"] = s.model_tflops_per_gpu;
  j["mfu"] = s.mfu;
  if (!m.fits) j["alternatives"] = alternatives_json(r.alternatives);
  if (!r.notes.empty()) j["notes"] = r.notes;
  return j.dump(2) + "\n";
}

std::string search_text(const LayoutSearchResult& r) {
  const auto& m = r.model;
  const auto& c = r.cluster;
  std::string text = fmt::format("{} on {} x {}, global batch {} sequences of {} tokens\n", m.name, c.gpus, c.gpu.name,
                                 r.settings.global_batch, m.seq);
  text += notes_text(r.notes);
  text += fmt::format("{} valid layouts, {} fit memory, searched in {:.3f} s\n\n", r.search.candidates,
                      r.search.fitting, r.seconds);
  if (r.search.top.empty()) {
    text += "no layout fits: more GPUs, a smaller micro-batch or 8-bit activations may help\n";
    return text;
  }
  text += fmt::format("{:>4} {:>3} {:>3} {:>4} {:>3} {:>3} {:>3} {:>3} {:>10} {:>11} {:>3} {:>9} {:>8} {:>12} {:>6}\n",
                      "rank", "tp", "pp", "dp", "cp", "vpp", "mb", "sp", "recompute", "sharding", "off", "mem GB",
                      "step s", "tokens/s", "MFU");
  for (size_t i = 0; i < r.search.top.size(); ++i) {
    const auto& x = r.search.top[i];
    const auto& p = x.config;
    text += fmt::format(
        "{:>4} {:>3} {:>3} {:>4} {:>3} {:>3} {:>3} {:>3} {:>10} {:>11} {:>3} {:>9.1f} {:>8.3f} {:>12.0f} {:>5.1f}%\n", i + 1,
        p.tp, p.pp, p.dp, p.cp, p.vpp, p.micro_batch, p.sequence_parallel ? "y" : "n", to_string(p.recompute),
        to_string(p.sharding), p.cpu_offload ? "y" : "n", x.evaluation.memory_bytes / 1e9, x.evaluation.step_seconds,
        x.tokens_per_second, 100 * r.mfu[i]);
  }
  return text;
}

std::string search_json(const LayoutSearchResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < r.search.top.size(); ++i) {
    const auto& x = r.search.top[i];
    const auto& p = x.config;
    rows.push_back({{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"cp", p.cp}, {"vpp", p.vpp},
                    {"micro_batch", p.micro_batch}, {"sequence_parallel", p.sequence_parallel},
                    {"recompute", to_string(p.recompute)}, {"sharding", to_string(p.sharding)},
                    {"cpu_offload", p.cpu_offload}, {"memory_bytes", x.evaluation.memory_bytes},
                    {"step_seconds", x.evaluation.step_seconds}, {"tokens_per_second", x.tokens_per_second},
                    {"mfu", r.mfu[i]}});
  }
  nlohmann::json j = {{"model", r.model.name},         {"gpu", r.cluster.gpu.name},
                      {"gpus", r.cluster.gpus},        {"global_batch", r.settings.global_batch},
                      {"candidates", r.search.candidates}, {"fitting", r.search.fitting},
                      {"search_seconds", r.seconds},   {"top", rows}};
  if (!r.notes.empty()) j["notes"] = r.notes;
  return j.dump(2) + "\n";
}

std::string validation_text(const ValidationSummary& s) {
  TextTable t;
  t.add_column("row");
  t.add_column("source", TextTable::Align::kLeft);
  t.add_column("model", TextTable::Align::kLeft);
  t.add_column("recompute", TextTable::Align::kLeft);
  t.add_column("metric", TextTable::Align::kLeft);
  t.add_column("micro-batch");
  t.add_column("measured");
  t.add_column("predicted");
  t.add_column("error");
  const bool memory = s.memory_rows > 0;
  if (memory) {
    t.add_column("memory GB");
    t.add_column("predicted");
    t.add_column("error");
  }
  for (const auto& r : s.results) {
    std::string mb = fmt::format("{}{}", r.chosen_micro_batch, r.row.micro_batch_known ? "" : " (chosen)");
    std::string unit = r.target == "step_seconds" ? "s" : "ms";
    std::vector<std::string> cells = {
        std::to_string(r.row.index), shorten(r.row.source, 32),
        fmt::format("{} {}L h{}", r.row.model.name, r.row.model.layers, r.row.model.hidden),
        std::string(to_string(r.row.parallel.recompute)) + (r.row.parallel.sequence_parallel ? "+SP" : ""), r.target,
        mb, fmt::format("{:.3f} {}", r.row.measured, unit), fmt::format("{:.3f} {}", r.predicted, unit),
        fmt::format("{:+.1f}%", r.error_pct)};
    if (memory) {
      const bool has = r.row.measured_memory_gb > 0;
      cells.push_back(has ? fmt::format("{:.1f}", r.row.measured_memory_gb) : "");
      cells.push_back(has ? fmt::format("{:.1f}", r.predicted_memory_gb) : "");
      cells.push_back(has ? fmt::format("{:+.1f}%", r.memory_error_pct) : "");
    }
    t.add_row(cells);
  }
  std::string out = t.render();
  if (s.step_rows)
    out += fmt::format("  step time ({} rows): mean |error| {:.2f}%, max |error| {:.2f}%\n", s.step_rows,
                       s.step_mean_abs_pct, s.step_max_abs_pct);
  if (s.layer_rows)
    out += fmt::format("  one-layer forward+backward ({} rows): mean |error| {:.2f}%, max |error| {:.2f}%\n",
                       s.layer_rows, s.layer_mean_abs_pct, s.layer_max_abs_pct);
  if (s.memory_rows)
    out += fmt::format("  peak memory per GPU ({} rows): mean |error| {:.2f}%, max |error| {:.2f}%\n", s.memory_rows,
                       s.memory_mean_abs_pct, s.memory_max_abs_pct);
  if (!s.notes.empty()) {
    out += fmt::format("  {} row{} on an approximated GPU:\n", s.notes.size(), s.notes.size() == 1 ? "" : "s");
    for (const auto& n : s.notes) out += "    " + n + "\n";
  }
  if (!s.skipped.empty()) {
    out += fmt::format("  {} row{} not predicted:\n", s.skipped.size(), s.skipped.size() == 1 ? "" : "s");
    for (const auto& k : s.skipped) out += "    " + k.reason + "\n";
  }
  return out;
}

std::string validation_json(const ValidationSummary& s) {
  nlohmann::ordered_json j;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& r : s.results) {
    nlohmann::ordered_json row;
    row["index"] = r.row.index;
    if (r.target == "step_seconds")
      row["predicted_step_seconds"] = r.predicted_step_seconds;
    else
      row["predicted_step_seconds"] = nullptr;
    row["metric"] = r.target;
    row["measured"] = r.row.measured;
    row["predicted"] = r.predicted;
    row["error_pct"] = r.error_pct;
    row["micro_batch"] = r.chosen_micro_batch;
    row["micro_batch_chosen"] = !r.row.micro_batch_known;
    if (r.row.measured_memory_gb > 0) {
      row["measured_memory_gb"] = r.row.measured_memory_gb;
      row["predicted_memory_gb"] = r.predicted_memory_gb;
      row["memory_error_pct"] = r.memory_error_pct;
    }
    j["rows"].push_back(row);
  }
  j["notes"] = s.notes;
  j["skipped"] = nlohmann::ordered_json::array();
  for (const auto& k : s.skipped) j["skipped"].push_back({{"index", k.index}, {"line", k.line}, {"reason", k.reason}});
  j["summary"] = {{"step_rows", s.step_rows},
                  {"step_mean_abs_pct", s.step_mean_abs_pct},
                  {"step_max_abs_pct", s.step_max_abs_pct},
                  {"layer_rows", s.layer_rows},
                  {"layer_mean_abs_pct", s.layer_mean_abs_pct},
                  {"layer_max_abs_pct", s.layer_max_abs_pct},
                  {"memory_rows", s.memory_rows},
                  {"memory_mean_abs_pct", s.memory_mean_abs_pct},
                  {"memory_max_abs_pct", s.memory_max_abs_pct},
                  {"skipped_rows", s.skipped.size()}};
  return j.dump(2) + "\n";
}

}  // namespace stepscope::report
