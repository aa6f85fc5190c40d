#include "model/parallel_config.h"

namespace stepscope::model {

std::string_view to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
    case Recompute::kOp:
      return "op";
  }
  return "none";
}

std::string_view to_string(Sharding s) {
  switch (s) {
    case Sharding::kDdp:
      return "ddp";
    case Sharding::kZero1:
      return "zero1";
    case Sharding::kZero2:
      return "zero2";
    case Sharding::kZero3:
      return "zero3";
    case Sharding::kFsdpHybrid:
      return "fsdp_hybrid";
  }
  return "ddp";
}

bool parse_recompute(std::string_view text, Recompute& out) {
  if (text == "none")
    out = Recompute::kNone;
  else if (text == "selective")
    out = Recompute::kSelective;
  else if (text == "full")
    out = Recompute::kFull;
  else if (text == "op")
    out = Recompute::kOp;
  else
    return false;
  return true;
}

bool parse_sharding(std::string_view text, Sharding& out) {
  if (text == "ddp")
    out = Sharding::kDdp;
  else if (text == "zero1" || text == "distributed_optimizer")
    out = Sharding::kZero1;
  else if (text == "zero2")
    out = Sharding::kZero2;
  else if (text == "zero3" || text == "fsdp")
    out = Sharding::kZero3;
  else if (text == "fsdp_hybrid" || text == "hsdp")  // PyTorch's name for hybrid sharding
    out = Sharding::kFsdpHybrid;
  else
    return false;
  return true;
}

}  // namespace stepscope::model
