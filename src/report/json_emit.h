// One description of a JSON value, two outputs: an ordered_json tree
// (TreeEmit: build_analyze_json, the Python module) or the text nlohmann's
// serializer would write for that tree (TextEmit: write_analyze_json),
// without building it. The per-rank sections a large set repeats thousands
// of times (attribution, replay, critical path) are written through this:
// built as trees, most of their writing time was allocation.
//
//   void emit_point(JsonEmit& e, const Point& p) {
//     e.begin_object();
//     e.key("x"); e.value(p.x);
//     e.end();
//   }
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace stepscope::report {

class JsonEmit {
 public:
  virtual ~JsonEmit() = default;
  virtual void begin_object() = 0;
  virtual void begin_array() = 0;
  virtual void end() = 0;                    // closes the innermost object or array
  // In an object, before each value: its name.
  virtual void key(std::string_view k) = 0;
  // A number, string, bool or null (any value, in fact: it is written whole).
  virtual void value(const nlohmann::ordered_json& v) = 0;
  // A scalar as the ordered_json value of it would be written; TextEmit
  // writes these without making that value.
  virtual void boolean(bool v) { value(v); }
  virtual void integer(std::int64_t v) { value(v); }
  virtual void unsigned_integer(std::uint64_t v) { value(v); }
  virtual void number(double v) { value(v); }
  virtual void text(std::string_view v) { value(v); }
  // A scalar by its C++ type, as ordered_json(v) stores it; anything else
  // (a vector, an enum, a brace list) through ordered_json.
  template <typename T>
  void scalar(const T& v) {
    if constexpr (std::is_same_v<T, bool>)
      boolean(v);
    else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, char> && std::is_signed_v<T>)
      integer(v);
    else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, char>)
      unsigned_integer(v);
    else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>)
      number(v);
    else if constexpr (std::is_convertible_v<const T&, std::string_view>)
      text(v);
    else
      value(nlohmann::ordered_json(v));
  }
  template <typename T>
  void member(std::string_view k, const T& v) {
    key(k);
    scalar(v);
  }
  void member(std::string_view k, const nlohmann::ordered_json& v) {
    key(k);
    value(v);
  }
};

class TreeEmit final : public JsonEmit {
 public:
  void begin_object() override { open(nlohmann::ordered_json::object()); }
  void begin_array() override { open(nlohmann::ordered_json::array()); }
  void end() override { open_.pop_back(); }
  void key(std::string_view k) override { key_ = k; }
  void value(const nlohmann::ordered_json& v) override { place(v); }
  nlohmann::ordered_json take() { return std::move(root_); }

 private:
  nlohmann::ordered_json& place(nlohmann::ordered_json v);
  void open(nlohmann::ordered_json v) { open_.push_back(&place(std::move(v))); }
  nlohmann::ordered_json root_;
  std::vector<nlohmann::ordered_json*> open_;  // the containers open, innermost last
  std::string key_;
};

// Writes to `out` as serializer::dump(tree, indent >= 0, false, indent,
// depth) would (indent < 0: compact); `depth` is the indentation of the
// value's own line, in spaces.
class TextEmit final : public JsonEmit {
 public:
  TextEmit(std::string& out, int indent, unsigned depth);
  void begin_object() override { open('{', true); }
  void begin_array() override { open('[', false); }
  void end() override;
  void key(std::string_view k) override;
  // Containers are walked and written member by member, as the serializer
  // writes them.
  void value(const nlohmann::ordered_json& v) override;
  void boolean(bool v) override;
  void integer(std::int64_t v) override;
  void unsigned_integer(std::uint64_t v) override;
  void number(double v) override;
  void text(std::string_view v) override;

 private:
  struct Open {
    bool object;
    size_t members;
  };
  void before_value();
  void open(char c, bool object);
  void quoted(std::string_view s);  // escaped as the serializer escapes it
  unsigned depth() const { return base_ + static_cast<unsigned>(open_.size()) * step_; }
  std::string& out_;
  bool pretty_;
  unsigned step_;
  unsigned base_;
  std::vector<Open> open_;
  bool after_key_ = false;
  nlohmann::detail::serializer<nlohmann::ordered_json> scalars_;
};

}  // namespace stepscope::report
