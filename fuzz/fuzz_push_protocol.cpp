// libFuzzer entry point for the monitor's push protocol: the bytes a client
// sends -> the server's line framing (PushLineFramer) -> the line parser
// (parse_push_line) -> the training state. Any crash, sanitizer finding or
// hang is a bug; so is:
//  - a different outcome when the same bytes arrive cut into other reads (the
//    first byte of the input picks the cut points): lines, reasons, values;
//  - an accepted value outside its documented range, or a non-finite derived
//    number (tokens/s);
//  - an accepted line that does not read back the same after format_push_line.
//
//   ./build-fuzz/fuzz/fuzz_push_protocol -max_total_time=60 fuzz/corpus_push   (docs/fuzzing.md)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "monitor/push_line_framer.h"
#include "monitor/push_protocol.h"
#include "monitor/training_state.h"

namespace {

using namespace stepscope::monitor;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_push_protocol: %s\n", what);
  std::abort();
}

bool in_range(const std::optional<double>& v, double lo, double hi, bool nan_ok = false) {
  if (!v) return true;
  if (std::isnan(*v)) return nan_ok;
  return *v >= lo && *v <= hi;
}

void check_update(const TrainingUpdate& u) {
  constexpr double f32 = 3.4028234663852886e38;
  if (!in_range(u.step, 0, kMaxPushStep) || !in_range(u.loss, -f32, f32, true) ||
      !in_range(u.step_time, kMinPushStepTime, kMaxPushStepTime) || !in_range(u.tokens, 0, kMaxPushTokens) ||
      !in_range(u.grad_norm, 0, f32) || !in_range(u.loss_scale, 1.1754943508222875e-38, f32))
    fail("an accepted value is outside its documented range");
  for (const auto& v : {u.step, u.tokens})
    if (v && *v != std::floor(*v)) fail("a fraction accepted for a whole-number field");
}

// One outcome per line: "ok <formatted line>" or "error <reason>".
std::vector<std::string> run(std::string_view bytes, const std::vector<size_t>& cuts, bool& incomplete) {
  PushLineFramer framer;
  TrainingState state;
  std::vector<std::string> out;
  auto sink = [&](std::string_view line, bool too_long) {
    if (too_long) {
      out.push_back("error too_long");
      return;
    }
    if (line.size() > kMaxPushLineBytes + 1) fail("the framer passed a line over the limit");
    PushParse p = parse_push_line(line);
    if (!p.ok) {
      if (p.reason.empty() || p.detail.empty()) fail("a rejection without a reason or detail");
      out.push_back("error " + p.reason);
      return;
    }
    check_update(p.update);
    state.apply(p.update, 0);
    const TrainingSnapshot t = state.snapshot();
    if (t.tokens_per_second && !std::isfinite(*t.tokens_per_second)) fail("tokens_per_second is not finite");
    // What a client formats from the update must read back the same.
    const std::string again = format_push_line(p.update);
    PushParse q = parse_push_line(std::string_view(again).substr(0, again.size() - 1));
    if (!q.ok) fail("a formatted accepted update is rejected");
    if (format_push_line(q.update) != again) fail("format/parse does not round-trip");
    out.push_back("ok " + again);
  };
  size_t at = 0;
  for (size_t cut : cuts) {
    if (cut <= at || cut >= bytes.size()) continue;
    framer.feed(bytes.substr(at, cut - at), sink);
    at = cut;
  }
  framer.feed(bytes.substr(at), sink);
  incomplete = framer.incomplete();
  if (framer.buffered() > kMaxPushLineBytes + 1) fail("the framer holds more than one line's worth");
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte seeds the cut points; the rest is what a client sends.
  const unsigned seed = data[0];
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<size_t> cuts;
  for (size_t at = 0, step = 1 + seed % 13; at < bytes.size(); step = 1 + (step * 7 + seed) % 97) cuts.push_back(at += step);
  bool incomplete_whole = false, incomplete_cut = false, incomplete_bytes = false;
  const auto whole = run(bytes, {}, incomplete_whole);
  const auto cut = run(bytes, cuts, incomplete_cut);
  std::vector<size_t> every;
  for (size_t i = 1; i < bytes.size() && i < 4096; ++i) every.push_back(i);
  const auto byte_by_byte = run(bytes, every, incomplete_bytes);
  if (whole != cut || whole != byte_by_byte || incomplete_whole != incomplete_cut || incomplete_whole != incomplete_bytes)
    fail("where the stream is cut changed the outcome");
  return 0;
}
