// What a DataLoader spends its time on, from the host spans nested in its
// __next__ calls: image decoding and augmentation, tokenization, or parsing
// records (pandas, pyarrow, json). The data_pipeline finding names the
// remedy that fits the largest of them. Python frames (profile with
// with_stack=True) are the main evidence; without them only the few
// operators that give the work away are (torchvision's image ops, bilinear
// resizes).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "diagnose/detector.h"

namespace stepscope::diagnose {

enum class LoaderWork : uint8_t { kImage, kTokenize, kParse };
inline constexpr size_t kLoaderWorkKinds = 3;
std::string_view to_string(LoaderWork w);  // "image", "tokenize", "parse"

// The kind of work a host span's name shows, if any: a Python frame's file
// or function ("site-packages/PIL/Image.py(2192): resize"), or an operator.
// No kind: false.
bool loader_work_of(std::string_view name, LoaderWork& out);

struct LoaderWorkTime {
  std::array<int64_t, kLoaderWorkKinds> ns{};  // host time of each kind inside the calls
  int64_t calls_ns = 0;                        // the calls' own time
  bool saw_python_frames = false;              // any Python frame inside the calls
};

// Over the DataLoader calls of rank `r` in its steps: a span whose name shows
// a kind counts with its whole duration, and its children are not visited
// (so nothing is counted twice).
LoaderWorkTime loader_work_time(const RankView& r);

}  // namespace stepscope::diagnose
