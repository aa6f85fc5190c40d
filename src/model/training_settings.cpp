#include "model/training_settings.h"

namespace stepscope::model {

std::string_view to_string(Dtype d) {
  switch (d) {
    case Dtype::kBf16:
      return "bf16";
    case Dtype::kFp16:
      return "fp16";
    case Dtype::kFp8:
      return "fp8";
    case Dtype::kMxfp8:
      return "mxfp8";
    case Dtype::kNvfp4:
      return "nvfp4";
  }
  return "bf16";
}

std::string_view to_string(Optimizer o) {
  switch (o) {
    case Optimizer::kAdam:
      return "adam";
    case Optimizer::kAdamW:
      return "adamw";
    case Optimizer::kSgd:
      return "sgd";
  }
  return "adamw";
}

std::string_view to_string(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::kFlash:
      return "flash";
    case AttentionKernel::kUnfused:
      return "unfused";
    case AttentionKernel::kFlash2:
      return "fa2";
  }
  return "flash";
}

bool parse_dtype(std::string_view text, Dtype& out) {
  if (text == "bf16")
    out = Dtype::kBf16;
  else if (text == "fp16")
    out = Dtype::kFp16;
  else if (text == "fp8")
    out = Dtype::kFp8;
  else if (text == "mxfp8")
    out = Dtype::kMxfp8;
  else if (text == "nvfp4")
    out = Dtype::kNvfp4;
  else
    return false;
  return true;
}

bool parse_optimizer(std::string_view text, Optimizer& out) {
  if (text == "adam")
    out = Optimizer::kAdam;
  else if (text == "adamw")
    out = Optimizer::kAdamW;
  else if (text == "sgd")
    out = Optimizer::kSgd;
  else
    return false;
  return true;
}

bool parse_attention(std::string_view text, AttentionKernel& out) {
  if (text == "flash")
    out = AttentionKernel::kFlash;
  else if (text == "unfused")
    out = AttentionKernel::kUnfused;
  else if (text == "fa2")
    out = AttentionKernel::kFlash2;
  else
    return false;
  return true;
}

std::string_view to_string(Stack s) { return s == Stack::kPytorch ? "pytorch" : "megatron"; }

std::string_view to_string(OptimizerImpl i) {
  switch (i) {
    case OptimizerImpl::kAuto:
      return "auto";
    case OptimizerImpl::kForeach:
      return "foreach";
    case OptimizerImpl::kFused:
      return "fused";
  }
  return "auto";
}

bool parse_stack(std::string_view text, Stack& out) {
  if (text == "megatron")
    out = Stack::kMegatron;
  else if (text == "pytorch")
    out = Stack::kPytorch;
  else
    return false;
  return true;
}

bool parse_optimizer_impl(std::string_view text, OptimizerImpl& out) {
  if (text == "auto")
    out = OptimizerImpl::kAuto;
  else if (text == "foreach")
    out = OptimizerImpl::kForeach;
  else if (text == "fused")
    out = OptimizerImpl::kFused;
  else
    return false;
  return true;
}

std::string_view to_string(Fp8Impl i) {
  switch (i) {
    case Fp8Impl::kAuto:
      return "auto";
    case Fp8Impl::kTransformerEngine:
      return "te";
    case Fp8Impl::kTorchao:
      return "torchao";
  }
  return "auto";
}

bool parse_fp8_impl(std::string_view text, Fp8Impl& out) {
  if (text == "auto")
    out = Fp8Impl::kAuto;
  else if (text == "te")
    out = Fp8Impl::kTransformerEngine;
  else if (text == "torchao")
    out = Fp8Impl::kTorchao;
  else
    return false;
  return true;
}

}  // namespace stepscope::model
