#include "diagnose/loader_work.h"

#include <vector>

#include "analysis/saturating.h"
#include "diagnose/detector_support.h"
#include "diagnose/host_index.h"
#include "diagnose/host_tree.h"

namespace stepscope::diagnose {

std::string_view to_string(LoaderWork w) {
  switch (w) {
    case LoaderWork::kImage: return "image";
    case LoaderWork::kTokenize: return "tokenize";
    case LoaderWork::kParse: return "parse";
  }
  return "image";
}

namespace {

bool has_any(std::string_view name, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts)
    if (name.find(p) != std::string_view::npos) return true;
  return false;
}

}  // namespace

bool loader_work_of(std::string_view name, LoaderWork& out) {
  // Libraries by their package folders (as Python frames name their files),
  // and the operators torchvision's decoders and resizes run.
  if (has_any(name, {"PIL/", "PIL\\", "torchvision/transforms", "torchvision/io", "torchvision\\transforms",
                     "cv2/", "albumentations/", "timm/data/", "image::decode_", "torchvision::", "decode_jpeg",
                     "aten::upsample_bilinear2d", "aten::_upsample_bilinear2d_aa", "aten::upsample_bicubic2d"})) {
    out = LoaderWork::kImage;
    return true;
  }
  if (has_any(name, {"tokenizers/", "tokenization_", "transformers/tokenization", "tiktoken/", "sentencepiece/",
                     "encode_batch", "TokenizerFast"})) {
    out = LoaderWork::kTokenize;
    return true;
  }
  if (has_any(name, {"pandas/", "pyarrow/", "json/decoder.py", "json/__init__.py", "/csv.py", "datasets/arrow"})) {
    out = LoaderWork::kParse;
    return true;
  }
  return false;
}

LoaderWorkTime loader_work_time(const RankView& r) {
  LoaderWorkTime t;
  const trace::EventStore& s = *r.store;
  std::vector<uint32_t> stack;
  for (const HostCall& c : r.host->dataloader.calls()) {
    if (step_index_at(*r.attribution, c.start_ns) < 0) continue;
    analysis::add_into(t.calls_ns, c.end_ns - c.start_ns);
    stack.assign(r.tree->children(c.row).begin(), r.tree->children(c.row).end());
    while (!stack.empty()) {
      const uint32_t row = stack.back();
      stack.pop_back();
      t.saw_python_frames = t.saw_python_frames || s.events.kind[row] == trace::EventKind::kPythonFunction;
      LoaderWork w;
      if (loader_work_of(s.name_of(row), w)) {
        analysis::add_into(t.ns[static_cast<size_t>(w)], s.events.dur_ns[row]);
        continue;
      }
      for (uint32_t child : r.tree->children(row)) stack.push_back(child);
    }
  }
  return t;
}

}  // namespace stepscope::diagnose
