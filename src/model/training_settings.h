// What one optimizer step trains with, independent of the parallel layout.
#pragma once

#include <cstdint>
#include <string_view>

namespace stepscope::model {

// The precision of the linear layers' GEMMs. kFp8: per-tensor or per-row
// scaled FP8 (Transformer Engine, torchao float8); kMxfp8 / kNvfp4: the
// block-scaled formats of Blackwell's tensor cores (32-element blocks with
// an 8-bit power-of-two scale; 16-element blocks with an FP8 scale).
enum class Dtype : uint8_t { kBf16, kFp16, kFp8, kMxfp8, kNvfp4 };
// 8 bits and below: the GEMM inputs are cast from 16-bit copies every pass.
inline bool is_low_precision(Dtype d) { return d == Dtype::kFp8 || d == Dtype::kMxfp8 || d == Dtype::kNvfp4; }
enum class Optimizer : uint8_t { kAdam, kAdamW, kSgd };
// kUnfused: the attention scores (b·a·s·s) are materialised, softmax and
// dropout run as separate memory-bound kernels (Megatron-LM 2021-2022).
// kFlash: one fused kernel that never stores the scores, as the Megatron
// stack runs it (Transformer Engine: cuDNN fused attention on Hopper and
// Blackwell, FlashAttention-2 on Ampere). kFlash2: FlashAttention-2 itself —
// PyTorch SDPA's flash backend, first in its fixed priority order
// (pytorch/pytorch#138907), and the flash-attn 2 package — which reaches a
// smaller share of Hopper's peak.
enum class AttentionKernel : uint8_t { kFlash, kUnfused, kFlash2 };

// Whose conventions hold the training state and save the activations
// (docs/planner.md "Memory"). kMegatron: Megatron-LM / NeMo / Megatron-Bridge
// — 16-bit weights with fp32 master copies inside the optimizer, gradient
// buffers that persist across steps, fused kernels (Transformer Engine /
// Apex) that save what Korthikanti et al. 2022 count. kPytorch: PyTorch-native
// training (FSDP2 / DDP with mixed precision, as torchtitan, llm-foundry and
// Hugging Face run it) — fp32 parameters are the master copy, 16-bit copies
// exist only while a layer computes, gradients (fp32) are freed after each
// step by zero_grad(set_to_none=True), and eager modules save more than fused
// kernels (fp32 norm upcasts, unfused SwiGLU) unless torch.compile fuses them.
enum class Stack : uint8_t { kMegatron, kPytorch };

// How the optimizer step walks the parameters. kForeach (PyTorch's default
// on CUDA) holds one extra fp32 tensor per parameter during the step; kFused
// (torch fused=True, Apex / Transformer Engine FusedAdam) none. kAuto: the
// stack's default (foreach for PyTorch, fused for Megatron).
enum class OptimizerImpl : uint8_t { kAuto, kForeach, kFused };

// Who casts the GEMM operands of a low-precision recipe. kTransformerEngine:
// fused cast kernels (amax, scale and both layouts in one pass); kTorchao:
// torchao's float8 training, whose dynamic scaling runs op by op unless
// torch.compile fuses it. kAuto: the stack's (Transformer Engine for
// Megatron, torchao for PyTorch).
enum class Fp8Impl : uint8_t { kAuto, kTransformerEngine, kTorchao };

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
  Stack stack = Stack::kMegatron;
  bool compiled = false;  // torch.compile over each block: fused activations as on the Megatron stack
  // Tensor-parallel collectives overlapped with the GEMMs they feed
  // (Megatron-Core --tp-comm-overlap, torchtitan async TP); needs sequence parallelism.
  bool tp_comm_overlap = false;
  // FSDP all-gathers the low-precision weights (torchao's
  // enable_fsdp_float8_all_gather): each shard is cast before the gather,
  // which then moves 1 byte per parameter; needs fp8 and weight sharding.
  bool fp8_all_gather = false;
  OptimizerImpl optimizer_impl = OptimizerImpl::kAuto;
  Fp8Impl fp8_impl = Fp8Impl::kAuto;
  // MoE expert capacity (Megatron-Core --moe-expert-capacity-factor): each
  // expert takes at most factor × its balanced share of the token copies and
  // drops the rest; 0: dropless. With pad_to_capacity
  // (--moe-pad-expert-input-to-capacity) every expert runs on exactly its
  // capacity, padding included.
  double moe_capacity_factor = 0;
  bool moe_pad_to_capacity = false;
  // The step's kernels replayed from CUDA graphs (Megatron-Core
  // --cuda-graph-impl / --enable-cuda-graph, torch.compile
  // mode="reduce-overhead"): the host issues each for the replay's cost
  // instead of an eager dispatch and launch.
  bool cuda_graphs = false;
  // FSDP1's flat parameters (llm-foundry / Composer, HF Accelerate's
  // default): each unit all-gathers into one flat buffer the parameters are
  // views of. FSDP2 (torchtitan, fully_shard) gathers into a staging buffer
  // and copies every parameter out of it.
  bool fsdp_flat_params = false;
  // FSDP frees each layer's gathered weights after its forward and gathers
  // them again for backward (fully_shard's default). Off (FSDP2
  // reshard_after_forward=False, FSDP1 SHARD_GRAD_OP): the gathered weights
  // stay until the layer's backward, one gather per micro-batch.
  bool reshard_after_forward = true;
  // Block-sparse attention (issue #29): the share of (query block, key
  // block) pairs the fused kernel computes, e.g. a sliding window's or a
  // document mask's density; 0 = dense causal (half the pairs).
  double attention_density = 0;

  // The token copies the routed experts compute and exchange, as a share of
  // the balanced top-k count. Routing is modelled as balanced, so a factor
  // ≥ 1 drops nothing; below 1 it drops (1 − factor); padding runs the full
  // capacity.
  double moe_routed_share() const {
    if (moe_capacity_factor <= 0) return 1;
    return moe_pad_to_capacity ? moe_capacity_factor : (moe_capacity_factor < 1 ? moe_capacity_factor : 1.0);
  }

  // Whether saved activations follow eager PyTorch modules (see Stack).
  bool eager_activations() const { return stack == Stack::kPytorch && !compiled; }
  // Whether low-precision casts run as fused kernels (see Fp8Impl).
  bool fused_casts() const {
    const Fp8Impl impl =
        fp8_impl != Fp8Impl::kAuto ? fp8_impl : stack == Stack::kMegatron ? Fp8Impl::kTransformerEngine : Fp8Impl::kTorchao;
    return impl == Fp8Impl::kTransformerEngine || compiled;
  }
  bool foreach_optimizer() const {
    return optimizer_impl == OptimizerImpl::kAuto ? stack == Stack::kPytorch
                                                  : optimizer_impl == OptimizerImpl::kForeach;
  }
};

std::string_view to_string(Dtype d);
std::string_view to_string(Optimizer o);
std::string_view to_string(AttentionKernel k);
bool parse_dtype(std::string_view text, Dtype& out);                // bf16|fp16|fp8|mxfp8|nvfp4
bool parse_optimizer(std::string_view text, Optimizer& out);        // adam|adamw|sgd
bool parse_attention(std::string_view text, AttentionKernel& out);  // flash|fa2|unfused
std::string_view to_string(Stack s);
std::string_view to_string(OptimizerImpl i);
bool parse_stack(std::string_view text, Stack& out);                   // megatron|pytorch
bool parse_optimizer_impl(std::string_view text, OptimizerImpl& out);  // auto|foreach|fused
std::string_view to_string(Fp8Impl i);
bool parse_fp8_impl(std::string_view text, Fp8Impl& out);  // auto|te|torchao

}  // namespace stepscope::model
