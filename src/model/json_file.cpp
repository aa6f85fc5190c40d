#include "model/json_file.h"

#include <fmt/format.h>

#include <fstream>
#include <vector>

namespace stepscope::model {
namespace {

// Where the parser is: one frame per open object or array, so an error can
// name the field ("gemm[2].tflops"), not only the byte.
struct PathTracker {
  struct Frame {
    bool array = false;
    size_t index = 0;  // arrays: the element being parsed
    std::string key;   // objects: the member being parsed
  };
  std::vector<Frame> frames;

  std::string path() const {
    std::string out;
    for (const Frame& f : frames) {
      if (f.array)
        out += fmt::format("[{}]", f.index);
      else if (!f.key.empty())
        out += (out.empty() ? "" : ".") + text_for_message(f.key);
    }
    return out;
  }
  // A value (scalar or closed container) finished inside the current frame.
  void value_done() {
    if (!frames.empty() && frames.back().array) ++frames.back().index;
  }
};

struct TooDeep {
  size_t byte = 0;
};

}  // namespace

std::string text_for_message(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", ch);
    else if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += ch;
  }
  return out;
}

std::string field_error(const std::string& where, const std::string& field, const std::string& what) {
  return fmt::format("{}: field \"{}\" {}", where, field, what);
}

std::optional<nlohmann::json> parse_json_text(std::string_view text, const std::string& where, std::string& error) {
  using nlohmann::json;
  PathTracker at;
  auto callback = [&at](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        // nlohmann recurses when it destroys or copies a document: bound it.
        if (depth >= kMaxJsonDepth) throw TooDeep{};
        at.frames.push_back({event == json::parse_event_t::array_start, 0, {}});
        break;
      case json::parse_event_t::key:
        if (!at.frames.empty()) at.frames.back().key = parsed.is_string() ? parsed.get<std::string>() : "";
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!at.frames.empty()) at.frames.pop_back();
        at.value_done();
        break;
      case json::parse_event_t::value:
        at.value_done();
        break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), callback);
  } catch (const json::parse_error& e) {
    // e.byte says where; the message's own prefix is nlohmann's, not ours.
    error = fmt::format("{}: not valid JSON (at byte {})", where, e.byte);
  } catch (const json::out_of_range& e) {
    // 406: a number literal a double cannot hold (1e309). The literal is the
    // last token read; nlohmann's message quotes it.
    std::string what = e.what();
    std::string literal;
    if (size_t q = what.find('\''); q != std::string::npos)
      if (size_t r = what.find('\'', q + 1); r != std::string::npos) literal = what.substr(q + 1, r - q - 1);
    if (literal.size() > 40) literal = literal.substr(0, 40) + "...";
    const std::string field = at.path();
    error = field.empty() ? fmt::format("{}: number {} is out of range", where, literal)
                          : field_error(where, field, fmt::format("holds a number out of range ({})", literal));
  } catch (const TooDeep&) {
    error = fmt::format("{}: nesting deeper than {} levels", where, kMaxJsonDepth);
  } catch (const json::exception&) {
    error = fmt::format("{}: not valid JSON", where);
  }
  return std::nullopt;
}

std::optional<std::string> read_input_file(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("{}: cannot open", path);
    return std::nullopt;
  }
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes) {
      error = fmt::format("{}: larger than {} MiB, not a planner input", path, kMaxInputBytes >> 20);
      return std::nullopt;
    }
  }
  if (in.bad()) {
    error = fmt::format("{}: cannot read", path);
    return std::nullopt;
  }
  return text;
}

std::optional<nlohmann::json> read_json_file(const std::string& path, std::string& error) {
  std::optional<std::string> text = read_input_file(path, error);
  if (!text) return std::nullopt;
  return parse_json_text(*text, path, error);
}

}  // namespace stepscope::model
