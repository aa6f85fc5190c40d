#include "diagnose/op_args.h"

#include <algorithm>
#include <charconv>

namespace stepscope::diagnose {
namespace {

void skip_ws(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
}

// Skips one JSON value (number, string, list); false on malformed text.
bool skip_value(std::string_view s, size_t& i) {
  skip_ws(s, i);
  if (i >= s.size()) return false;
  if (s[i] == '"') {
    for (++i; i < s.size(); ++i) {
      if (s[i] == '\\') { ++i; continue; }
      if (s[i] == '"') { ++i; return true; }
    }
    return false;
  }
  if (s[i] == '[') {
    int depth = 0;
    for (; i < s.size(); ++i) {
      if (s[i] == '"') {
        if (!skip_value(s, i)) return false;
        --i;
        continue;
      }
      if (s[i] == '[') ++depth;
      if (s[i] == ']' && --depth == 0) { ++i; return true; }
    }
    return false;
  }
  while (i < s.size() && s[i] != ',' && s[i] != ']') ++i;
  return true;
}

// Walks the elements of the JSON list `s`: `element(i)` is called with i at
// each element's first byte and must leave i past it (false: malformed).
// False when `s` is no well-formed list.
template <typename Element>
bool for_each_element(std::string_view s, Element&& element) {
  size_t i = 0;
  skip_ws(s, i);
  if (i >= s.size() || s[i] != '[') return false;
  ++i;
  for (;;) {
    skip_ws(s, i);
    if (i >= s.size()) return false;
    if (s[i] == ']') return true;
    if (!element(i)) return false;
    skip_ws(s, i);
    if (i < s.size() && s[i] == ',') ++i;
  }
}

}  // namespace

int64_t InputShape::numel() const {
  if (list) return 0;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<InputShape> parse_input_dims(std::string_view s) {
  std::vector<InputShape> out;
  const bool ok = for_each_element(s, [&](size_t& i) {
    InputShape shape;
    if (s[i] == '[') {
      size_t start = i;
      ++i;
      skip_ws(s, i);
      if (i < s.size() && s[i] == '[') {
        shape.list = true;
        i = start;
        if (!skip_value(s, i)) return false;
      } else {
        // A flat list of integers.
        while (i < s.size() && s[i] != ']') {
          skip_ws(s, i);
          int64_t v = 0;
          auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
          if (ec != std::errc()) return false;
          shape.dims.push_back(v);
          i = static_cast<size_t>(p - s.data());
          skip_ws(s, i);
          if (i < s.size() && s[i] == ',') ++i;
        }
        if (i >= s.size()) return false;
        ++i;
      }
    } else if (!skip_value(s, i)) {
      return false;
    }
    out.push_back(std::move(shape));
    return true;
  });
  return ok ? out : std::vector<InputShape>{};
}

std::vector<std::string> parse_string_list(std::string_view s) {
  std::vector<std::string> out;
  const bool ok = for_each_element(s, [&](size_t& i) {
    if (s[i] == '"') {
      std::string v;
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        v += s[i];
      }
      if (i >= s.size()) return false;
      ++i;
      out.push_back(std::move(v));
    } else {
      size_t start = i;
      if (!skip_value(s, i)) return false;
      out.emplace_back(s.substr(start, i - start));
    }
    return true;
  });
  return ok ? out : std::vector<std::string>{};
}

OpArgReader::OpArgReader(const trace::EventStore& store)
    : store_(store),
      dims_key_(store.strings.find("Input Dims")),
      type_key_(store.strings.find("Input type")),
      concrete_key_(store.strings.find("Concrete Inputs")) {
  if (dims_key_ != trace::StringTable::kMissing)
    has_shapes_ = std::find(store.args.key.begin(), store.args.key.end(), dims_key_) != store.args.key.end();
}

OpArgs OpArgReader::read(uint32_t row) const {
  OpArgs a;
  if (dims_key_ != trace::StringTable::kMissing) {
    if (auto t = store_.arg_string(row, dims_key_)) {
      a.dims_text = *t;
      auto [it, added] = shapes_of_.try_emplace(t->data());
      if (added) it->second = parse_input_dims(*t);
      a.shapes = it->second;
      a.has_dims = true;
    }
  }
  if (type_key_ != trace::StringTable::kMissing) {
    if (auto t = store_.arg_string(row, type_key_)) {
      auto [it, added] = types_of_.try_emplace(t->data());
      if (added) it->second = parse_string_list(*t);
      a.types = it->second;
    }
  }
  if (concrete_key_ != trace::StringTable::kMissing)
    if (auto t = store_.arg_string(row, concrete_key_)) a.concrete_text = *t;
  return a;
}

bool is_matmul_op(std::string_view name) {
  return name == "aten::mm" || name == "aten::addmm" || name == "aten::bmm" || name == "aten::baddbmm" ||
         name == "aten::addbmm" || name == "aten::_scaled_mm" || name == "aten::linear" || name == "aten::matmul";
}

std::optional<double> matmul_flops(std::string_view op, std::span<const InputShape> s) {
  auto d = [&](size_t i) -> const std::vector<int64_t>& { return s[i].dims; };
  auto mnk = [](int64_t m, int64_t k, int64_t n) { return 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n); };
  if ((op == "aten::mm" || op == "aten::_scaled_mm") && s.size() >= 2 && d(0).size() == 2 && d(1).size() == 2 &&
      d(0)[1] == d(1)[0])
    return mnk(d(0)[0], d(0)[1], d(1)[1]);
  if (op == "aten::addmm" && s.size() >= 3 && d(1).size() == 2 && d(2).size() == 2 && d(1)[1] == d(2)[0])
    return mnk(d(1)[0], d(1)[1], d(2)[1]);
  if (op == "aten::bmm" && s.size() >= 2 && d(0).size() == 3 && d(1).size() == 3 && d(0)[2] == d(1)[1])
    return static_cast<double>(d(0)[0]) * mnk(d(0)[1], d(0)[2], d(1)[2]);
  if ((op == "aten::baddbmm" || op == "aten::addbmm") && s.size() >= 3 && d(1).size() == 3 && d(2).size() == 3 &&
      d(1)[2] == d(2)[1])
    return static_cast<double>(d(1)[0]) * mnk(d(1)[1], d(1)[2], d(2)[2]);
  if (op == "aten::linear" && s.size() >= 2 && !d(0).empty() && d(1).size() == 2 && d(0).back() == d(1)[1]) {
    double rows = 1;
    for (size_t i = 0; i + 1 < d(0).size(); ++i) rows *= static_cast<double>(d(0)[i]);
    return 2.0 * rows * static_cast<double>(d(1)[1]) * static_cast<double>(d(1)[0]);
  }
  return std::nullopt;
}

}  // namespace stepscope::diagnose
