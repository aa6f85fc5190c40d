// libFuzzer entry point for the hardware-profile reader (`analyze --profile`,
// the profile `stepscope bench` writes): the bytes go to read_profile_text.
// A refusal is one error line naming the field; nothing may crash, throw or
// hang. An accepted profile must survive a write and a second read (the
// round trip `bench` then `analyze` takes), and its ceilings
// (measured_peaks) must all be finite, the measured ones at least 0.001.
//
//   ./build-fuzz/fuzz/fuzz_hw_profile -max_total_time=60 fuzz/corpus_fuzz_hw_profile   (docs/fuzzing.md)
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hwbench/profile_ceilings.h"
#include "hwbench/profile_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope::hwbench;
  using namespace stepscope::model;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;
  auto p = read_profile_text(text, "fuzz.json", error);
  if (!p) {
    if (error.empty() || error.find('\n') != std::string::npos) std::abort();
    return 0;
  }
  // What the reader accepts, the writer writes and the reader reads back.
  error.clear();
  auto again = profile_from_json(profile_to_json(*p), "again.json", error);
  if (!again || again->gemm.size() != p->gemm.size() || again->memory.size() != p->memory.size() ||
      again->collectives.size() != p->collectives.size())
    std::abort();
  error.clear();
  auto row = measured_peaks(*p, error);
  if (!row) return 0;  // nothing measured: an error, not a ceiling
  for (double v : {row->fp32_tflops, row->tf32_tflops, row->bf16_tflops, row->fp16_tflops, row->fp8_tflops,
                   row->hbm_gbps, row->link_gbps, row->memory_gb})
    if (!std::isfinite(v) || v < 0) std::abort();
  if (p->gemm_max_tflops("bf16") > 0 && !(row->bf16_tflops >= 1e-3)) std::abort();
  if (const BandwidthResult* copy = p->memory_result("hbm_copy"); copy && !(row->hbm_gbps >= 1e-3)) std::abort();
  return 0;
}
