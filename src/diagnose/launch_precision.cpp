#include "diagnose/launch_precision.h"

#include <array>

#include "analysis/name_patterns.h"
#include "diagnose/host_index.h"

namespace stepscope::diagnose {
namespace {

using analysis::Match;
using TypeRule = analysis::NameRule<OpFloat>;

// Low-precision words first: "s16816gemm_bf16" accumulates in single
// precision but reads bf16.
constexpr std::array kTypeRules = {
    TypeRule{{Match::kContains, "bf16"}, OpFloat::kOther},
    TypeRule{{Match::kContains, "bfloat16"}, OpFloat::kOther},
    TypeRule{{Match::kContains, "f16"}, OpFloat::kOther},  // f16f16_f16f32
    TypeRule{{Match::kContains, "fp16"}, OpFloat::kOther},
    TypeRule{{Match::kContains, "half"}, OpFloat::kOther},
    TypeRule{{Match::kContains, "h1688"}, OpFloat::kOther},
    TypeRule{{Match::kContains, "h16816"}, OpFloat::kOther},
    TypeRule{{Match::kContains, "e4m3"}, OpFloat::kOther},
    TypeRule{{Match::kContains, "e5m2"}, OpFloat::kOther},
    TypeRule{{Match::kContains, "fp8"}, OpFloat::kOther},
    TypeRule{{Match::kContains, "i8816"}, OpFloat::kOther},
    TypeRule{{Match::kContains, "tf32"}, OpFloat::kFloat32},
    TypeRule{{Match::kContains, "s1688gemm"}, OpFloat::kFloat32},  // Ampere TF32 m16n8k8, FP32 in and out
};

const analysis::NameRules<OpFloat>& type_rules() {
  static const analysis::NameRules<OpFloat> rules(kTypeRules, /*fold_case=*/true);
  return rules;
}

}  // namespace

OpFloat float_type_of(std::span<const std::string> input_types) {
  for (const std::string& t : input_types) {
    if (t == "float" || t == "float32") return OpFloat::kFloat32;
    // c10::BFloat16, c10::Half, c10::Float8_e4m3fn..., double.
    if (t == "double" || t.starts_with("c10::BFloat16") || t.starts_with("c10::Half") || t.starts_with("c10::Float8"))
      return OpFloat::kOther;
  }
  return OpFloat::kNone;
}

OpFloat matmul_name_float_type(std::string_view kernel_name) {
  return type_rules().match(kernel_name).value_or(OpFloat::kNone);
}

LaunchPrecision LaunchPrecisionReader::of_launch(uint32_t launch_row) {
  if (launch_row == HostTree::kNoRow) return {};
  return of_span(tree_.parent(launch_row));
}

// The answer for a span follows from its parent's and its own name and
// types, so each span is worked out once: walk up to the first span already
// known, then fill the path in from the top. Deeply nested spans (a
// recursive module, a crafted trace) then cost linear time, not depth x
// launches.
LaunchPrecision LaunchPrecisionReader::of_span(uint32_t row) {
  if (row == HostTree::kNoRow || row >= store_.events.size()) return {};
  if (by_span_.empty()) by_span_.assign(store_.events.size(), 0);
  auto decode = [](uint8_t v) {
    return LaunchPrecision{static_cast<OpFloat>(v & 0x3), (v & kOptimizerBit) != 0};
  };
  if (by_span_[row] & kKnown) return decode(by_span_[row]);
  std::vector<uint32_t> path;
  LaunchPrecision state;
  for (uint32_t r = row; r != HostTree::kNoRow; r = tree_.parent(r)) {
    if (by_span_[r] & kKnown) {
      state = decode(by_span_[r]);
      break;
    }
    path.push_back(r);
  }
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    const uint32_t r = *it;
    const trace::EventKind kind = store_.events.kind[r];
    if (is_record_function_kind(kind) && is_optimizer_step(store_.name_of(r)))
      state.in_optimizer = true;
    if (kind == trace::EventKind::kCpuOp) {
      OpFloat t = float_type_of(args_.read(r).types);
      // The innermost op with a floating-point input decides; only an aten
      // op's inputs are what its kernels compute in.
      if (t != OpFloat::kNone) state.type = store_.name_of(r).starts_with("aten::") ? t : OpFloat::kNone;
    }
    by_span_[r] = static_cast<uint8_t>(kKnown | (state.in_optimizer ? kOptimizerBit : 0) |
                                       static_cast<uint8_t>(state.type));
  }
  return state;
}

OpFloat LaunchPrecisionReader::of_matmul(trace::StringId kernel_name, uint32_t launch_row) {
  OpFloat named = OpFloat::kNone;
  if (kernel_name < name_types_.size()) {
    if (name_types_[kernel_name] == kUnknownName)
      name_types_[kernel_name] = static_cast<uint8_t>(matmul_name_float_type(store_.strings.get(kernel_name)));
    named = static_cast<OpFloat>(name_types_[kernel_name]);
  } else {
    named = matmul_name_float_type(store_.strings.get(kernel_name));
  }
  return named != OpFloat::kNone ? named : of_launch(launch_row).type;
}

}  // namespace stepscope::diagnose
