// Reading the operator arguments record_shapes writes: "Input Dims"
// ([[8192, 1024], [1024, 3072]]), "Input type" (["c10::BFloat16", ...]) and
// "Concrete Inputs" (["0", "64", ...]), all kept as raw JSON text in the
// store, and the FLOPs of a matmul from its shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/event_store.h"

namespace stepscope::diagnose {

// One top-level input of an op.
struct InputShape {
  std::vector<int64_t> dims;  // [] for scalars and absent inputs
  bool list = false;          // a TensorList ([[a, b], [c, d]]): dims holds nothing
  int64_t numel() const;      // product of dims (1 for a scalar, 0 for a list)
};

// Parses "Input Dims" text; empty on malformed text.
std::vector<InputShape> parse_input_dims(std::string_view json);
// Parses a JSON list of strings ("Input type", "Concrete Inputs"); empty on malformed text.
std::vector<std::string> parse_string_list(std::string_view json);

// The arguments of one op row. The views point into the store's strings and
// the reader's parses: valid while both live.
struct OpArgs {
  std::span<const InputShape> shapes;   // from "Input Dims"
  std::span<const std::string> types;   // from "Input type"
  std::string_view dims_text;           // "Input Dims" as written ("" if absent)
  std::string_view concrete_text;       // "Concrete Inputs" as written ("" if absent)
  bool has_dims = false;
};

// Looks up the keys once per store, and parses each distinct "Input Dims" /
// "Input type" text once: a training step repeats the same shapes every
// step, and parsing them per op row (vectors of vectors) was 4% of a
// synthetic rank's CPU.
class OpArgReader {
 public:
  explicit OpArgReader(const trace::EventStore& store);
  OpArgs read(uint32_t row) const;
  // True when some event carries "Input Dims" (record_shapes=True). The key
  // itself is interned by every reader, so its presence in the string table
  // says nothing.
  bool has_shapes() const { return has_shapes_; }

 private:
  const trace::EventStore& store_;
  trace::StringId dims_key_, type_key_, concrete_key_;
  bool has_shapes_ = false;
  // Keyed by the interned text's address: one string table entry, one parse.
  mutable std::unordered_map<const char*, std::vector<InputShape>> shapes_of_;
  mutable std::unordered_map<const char*, std::vector<std::string>> types_of_;
};

// True for the aten ops that are one matrix multiply on the device.
bool is_matmul_op(std::string_view name);
// 2*M*N*K (times batch) of aten::mm / addmm / bmm / baddbmm / addbmm /
// linear / _scaled_mm from their input shapes; nullopt when the shapes do not
// fit the op.
std::optional<double> matmul_flops(std::string_view op_name, std::span<const InputShape> shapes);

}  // namespace stepscope::diagnose
