// The floating-point type a GPU kernel computes in, and whether it ran
// inside the optimizer's step. compute_efficiency uses it to price an FP32
// model's move to bf16.
//
// Two sources, in order:
//  - a matmul kernel's name, where it says (cuBLAS/CUTLASS name their types:
//    "..._bf16bf16_...", "h16816gemm", "..._tf32f32_...", "s1688gemm" is
//    Ampere's TF32 instruction);
//  - the innermost aten op enclosing the launch that records a floating-point
//    input ("Input type", record_shapes=True): its first such input.
// A launch whose innermost typed op is not an aten op (a compiled graph's
// CompiledFunction, fbgemm's fused ops, a custom autograd function) has no
// type: such an op's inputs need not be what its kernels compute in
// (autocast casts inside a compiled graph, so its inputs are FP32 while its
// matmuls run in bf16).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/host_tree.h"
#include "diagnose/op_args.h"
#include "trace/event_store.h"

namespace stepscope::diagnose {

enum class OpFloat : uint8_t {
  kNone,     // not known: no typed aten op above the launch, or integer work
  kFloat32,  // "float" / "float32" (on tensor cores: TF32)
  kOther,    // bf16, fp16, fp8, double
};

// The first floating-point type among an op's "Input type" entries.
OpFloat float_type_of(std::span<const std::string> input_types);
// What a matmul kernel's name says of its input type, kNone when it says nothing.
OpFloat matmul_name_float_type(std::string_view kernel_name);

struct LaunchPrecision {
  OpFloat type = OpFloat::kNone;
  bool in_optimizer = false;  // inside an "Optimizer.step#..." annotation
};

// Resolves the kernels of one rank, caching by host span (a step launches
// thousands of kernels from a few hundred op rows) and by kernel name.
class LaunchPrecisionReader {
 public:
  LaunchPrecisionReader(const trace::EventStore& store, const HostTree& tree, const OpArgReader& args)
      : store_(store), tree_(tree), args_(args), name_types_(store.strings.size(), kUnknownName) {}
  // Any kernel: from the launching aten op.
  LaunchPrecision of_launch(uint32_t launch_row);
  // A matmul kernel's type: its name first, then the launching aten op.
  OpFloat of_matmul(trace::StringId kernel_name, uint32_t launch_row);

 private:
  // The answer for launches directly inside host span `row`.
  LaunchPrecision of_span(uint32_t row);

  static constexpr uint8_t kUnknownName = 0xff;
  const trace::EventStore& store_;
  const HostTree& tree_;
  const OpArgReader& args_;
  // Per event row, the answer for a host span: 0 not yet known, else
  // kKnown | type | optimizer bit. A flat array: a large rank asks for
  // millions of launches, and a hash lookup per launch doubled this
  // detector's time on the synthetic 8-rank set.
  static constexpr uint8_t kKnown = 0x80, kOptimizerBit = 0x40;
  std::vector<uint8_t> by_span_;
  std::vector<uint8_t> name_types_;  // per interned kernel name: OpFloat, or kUnknownName
};

}  // namespace stepscope::diagnose
