#include "report/json_emit.h"

namespace stepscope::report {

using nlohmann::ordered_json;

ordered_json& TreeEmit::place(ordered_json v) {
  if (open_.empty()) {
    root_ = std::move(v);
    return root_;
  }
  ordered_json& in = *open_.back();
  if (in.is_array()) {
    in.push_back(std::move(v));
    return in.back();
  }
  ordered_json& slot = in[key_];
  slot = std::move(v);
  return slot;
}

TextEmit::TextEmit(std::string& out, int indent, unsigned depth)
    : out_(out),
      pretty_(indent >= 0),
      step_(indent >= 0 ? static_cast<unsigned>(indent) : 0),
      base_(depth),
      scalars_(nlohmann::detail::output_adapter<char>(out), ' ') {}

void TextEmit::resume_object(size_t members) { open_.push_back({true, members}); }

// An array's element starts its own line; an object's member started with its key.
void TextEmit::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) return;
  Open& in = open_.back();
  out_ += in.members++ > 0 ? (pretty_ ? ",\n" : ",") : (pretty_ ? "\n" : "");
  if (pretty_) out_.append(depth(), ' ');
}

void TextEmit::open(char c, bool object) {
  before_value();
  out_ += c;
  open_.push_back({object, 0});
}

void TextEmit::end() {
  const Open closed = open_.back();
  open_.pop_back();
  if (closed.members > 0 && pretty_) {
    out_ += '\n';
    out_.append(depth(), ' ');
  }
  out_ += closed.object ? '}' : ']';
}

void TextEmit::key(std::string_view k) {
  Open& in = open_.back();
  out_ += in.members++ > 0 ? (pretty_ ? ",\n" : ",") : (pretty_ ? "\n" : "");
  if (pretty_) out_.append(depth(), ' ');
  out_ += '"';
  out_ += k;
  out_ += pretty_ ? "\": " : "\":";
  after_key_ = true;
}

void TextEmit::value(const ordered_json& v) {
  before_value();
  scalars_.dump(v, pretty_, false, step_, depth());
}

}  // namespace stepscope::report
