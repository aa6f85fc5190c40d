// What one optimizer step trains with, independent of the parallel layout.
#pragma once

#include <cstdint>
#include <string_view>

namespace stepscope::model {

enum class Dtype : uint8_t { kBf16, kFp16, kFp8 };
enum class Optimizer : uint8_t { kAdam, kAdamW, kSgd };
// kUnfused: the attention scores (b·a·s·s) are materialised, softmax and
// dropout run as separate memory-bound kernels (Megatron-LM 2021-2022).
// kFlash: one fused kernel that never stores the scores (FlashAttention).
enum class AttentionKernel : uint8_t { kFlash, kUnfused };

struct TrainingSettings {
  int global_batch = 0;  // sequences per optimizer step
  Dtype dtype = Dtype::kBf16;
  Optimizer optimizer = Optimizer::kAdamW;
  int activation_bits = 16;  // 16, or 8 / 4 for compressed saved activations
  bool grad_fp32 = false;    // gradients accumulated and reduced in fp32 (Megatron main_grad)
  AttentionKernel attention = AttentionKernel::kFlash;
  // Data-parallel gradient reduction (and ZeRO-3 gathers) overlapped with
  // backward compute (DDP buckets, FSDP prefetch, Megatron --overlap-grad-reduce).
  bool overlap_dp_comm = true;
};

std::string_view to_string(Dtype d);
std::string_view to_string(Optimizer o);
std::string_view to_string(AttentionKernel k);
bool parse_dtype(std::string_view text, Dtype& out);                // bf16|fp16|fp8
bool parse_optimizer(std::string_view text, Optimizer& out);        // adam|adamw|sgd
bool parse_attention(std::string_view text, AttentionKernel& out);  // flash|unfused

}  // namespace stepscope::model
