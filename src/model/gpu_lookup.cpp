#include "model/gpu_lookup.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <tuple>
#include <vector>

#include "model/cluster_spec.h"

namespace stepscope::model {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string alnum(const std::string& s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out += c;
  return out;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The memory a name states ("...-96GB", "80GB HBM3"), GB; 0 when none.
double stated_memory_gb(const std::string& lower_name) {
  static const std::regex gb(R"(([0-9]{2,3})\s*gb)");
  std::smatch m;
  return std::regex_search(lower_name, m, gb) ? std::stod(m[1].str()) : 0;
}

}  // namespace

GpuMatch lookup_gpu(std::string_view name) {
  GpuMatch match;
  if (name.size() > 256) return match;  // no GPU name is that long; keeps the regex and distances cheap
  if (const GpuSpec* g = find_gpu(name)) match.row = find_gpu_peaks(g->datasheet_name);
  if (!match.row) match.row = find_gpu_peaks(name);
  if (!match.row) return match;
  const double stated = stated_memory_gb(lower(name));
  // Datasheets round (80 GB HBM3 is 85.9e9 bytes; 141 GB, 144 GB): within
  // 3 GB is the same part. Twice the row's memory or more is a module's
  // total with its CPU memory (GH200 "480GB": 96 GB HBM3 + LPDDR5X), not
  // another HBM size.
  const double hbm = match.row->memory_gb;
  if (stated > 0 && std::abs(stated - hbm) > 3 && stated < 2 * hbm)
    match.approximation = fmt::format("\"{}\" states {:.0f} GB, approximated by the {} row ({:.0f} GB)", name, stated,
                                      match.row->model, match.row->memory_gb);
  return match;
}

std::string unknown_gpu_message(std::string_view name) {
  const std::string n = lower(name.substr(0, 256));
  // Nearest first: a name found inside a candidate, letters and digits only
  // ("mi300" in "AMD Instinct MI300X", "rtx4090" in "GeForce RTX 4090");
  // then by the distance to the candidate's start as long as the name (a
  // user types "h100" for "h100-sxm"); then to the whole candidate.
  std::vector<std::tuple<size_t, size_t, std::string>> scored;
  const std::string bare = alnum(n);
  auto score = [&](const std::string& candidate) {
    const bool inside = !bare.empty() && alnum(candidate).find(bare) != std::string::npos;
    scored.emplace_back(inside ? 0 : 1 + edit_distance(n, candidate.substr(0, n.size())), edit_distance(n, candidate),
                        candidate);
  };
  for (const auto& g : gpu_catalog()) score(g.name);
  // Table rows the catalog plans are named by their catalog name only.
  for (const auto& row : gpu_table()) {
    const bool planned = std::any_of(gpu_catalog().begin(), gpu_catalog().end(),
                                     [&](const GpuSpec& g) { return g.datasheet_name == row.model; });
    if (!planned) score(lower(row.model));
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::string closest;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) closest += (i ? ", " : "") + std::get<2>(scored[i]);
  return fmt::format("unknown GPU \"{}\" (closest: {})", name, closest);
}

std::string unplanned_gpu_message(std::string_view name) {
  const GpuMatch match = lookup_gpu(name);
  if (!match.row) return unknown_gpu_message(name);
  std::string planned;
  for (const auto& g : gpu_catalog()) planned += (planned.empty() ? "" : ", ") + g.name;
  return fmt::format(
      "{} is in the GPU table, but the planner has no sourced achievable rates (GEMM, NVLink, network) for it; it "
      "plans {}",
      match.row->model, planned);
}

double training_peak_tflops(const GpuPeaks& row, Dtype dtype) {
  switch (dtype) {
    case Dtype::kBf16:
      return row.bf16_tflops;
    case Dtype::kFp16:
      return row.fp16_tflops;
    case Dtype::kFp8:
      return row.fp8_tflops > 0 ? row.fp8_tflops : row.bf16_tflops;
    case Dtype::kMxfp8:
      return row.mxfp8_tflops;
    case Dtype::kNvfp4:
      return row.fp4_tflops;
  }
  return row.bf16_tflops;
}

}  // namespace stepscope::model
