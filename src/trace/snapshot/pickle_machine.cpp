#include "trace/snapshot/pickle_machine.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string_view>

namespace stepscope::trace::snapshot {
namespace {

// Protocol-0 UNICODE is raw-unicode-escape: bytes below 256 stand for
// themselves (Latin-1), \uXXXX and \UXXXXXXXX for any code point.
bool append_utf8(uint32_t cp, std::string& out) {
  if (cp > 0x10FFFF) return false;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return true;
}

bool raw_unicode_escape(std::string_view in, std::string& out) {
  for (size_t i = 0; i < in.size(); ++i) {
    const auto c = static_cast<uint8_t>(in[i]);
    if (c == '\\' && i + 1 < in.size() && (in[i + 1] == 'u' || in[i + 1] == 'U')) {
      const size_t digits = in[i + 1] == 'u' ? 4 : 8;
      if (i + 2 + digits > in.size()) return false;
      uint32_t cp = 0;
      const auto r = std::from_chars(in.data() + i + 2, in.data() + i + 2 + digits, cp, 16);
      if (r.ec != std::errc() || r.ptr != in.data() + i + 2 + digits) return false;
      if (!append_utf8(cp, out)) return false;
      i += 1 + digits;
    } else {
      append_utf8(c, out);
    }
  }
  return true;
}

}  // namespace

namespace {

enum class Refused { kNo, kGlobal, kObject, kBuffer };

Refused refused_as(PickleOp op) {
  switch (op) {
    case PickleOp::kGlobal:
    case PickleOp::kInst:
      return Refused::kGlobal;
    case PickleOp::kStackGlobal:
    case PickleOp::kReduce:
    case PickleOp::kBuild:
    case PickleOp::kObj:
    case PickleOp::kNewObj:
    case PickleOp::kNewObjEx:
    case PickleOp::kPersId:
    case PickleOp::kBinPersId:
    case PickleOp::kExt1:
    case PickleOp::kExt2:
    case PickleOp::kExt4:
      return Refused::kObject;
    case PickleOp::kNextBuffer:
    case PickleOp::kReadOnlyBuffer:
      return Refused::kBuffer;
    default:
      return Refused::kNo;
  }
}

}  // namespace

bool is_refused(PickleOp op) { return refused_as(op) != Refused::kNo; }

std::string refusal(const PickleInstr& in) {
  switch (refused_as(in.op)) {
    case Refused::kGlobal:
      return fmt::format("the file asks for the Python global {}.{}; a memory snapshot is plain data, so the reader "
                         "refuses it",
                         std::string(in.text), std::string(in.text2));
    case Refused::kObject:
      return "the file asks to build a Python object; a memory snapshot is plain data, so the reader refuses it";
    case Refused::kBuffer:
      return "out-of-band buffers are not part of a memory snapshot";
    case Refused::kNo:
      return "";
  }
  return "";
}

PickleMachine::PickleMachine(ValueArena& arena, PickleSink& sink, const std::vector<bool>* referenced,
                             const PickleLimits& limits)
    : arena_(arena), sink_(sink), referenced_(referenced), limits_(limits) {}

PickleMachine::~PickleMachine() {
  for (ValueId v : stack_) arena_.release(v);
  memo_.for_each_value([&](ValueId v) { arena_.release(v); });
  if (result_ != ValueArena::kNoValue) arena_.release(result_);
}

StepStatus PickleMachine::fail(const PickleInstr& in, const std::string& what) {
  error_ = fmt::format("{} at offset {}: {}", pickle_op_info(static_cast<uint8_t>(in.op)).name, in.offset, what);
  return StepStatus::kError;
}

bool PickleMachine::push(ValueId v) {
  if (stack_.size() + marks_.size() >= limits_.max_stack) {
    arena_.release(v);
    return false;
  }
  stack_.push_back(v);
  return true;
}

ValueId PickleMachine::pop() {
  const ValueId v = stack_.back();
  stack_.pop_back();
  return v;
}

bool PickleMachine::items_since_mark(size_t& first) {
  if (marks_.empty()) return false;
  first = marks_.back();
  marks_.pop_back();
  return true;
}

ValueId PickleMachine::take_result() {
  const ValueId r = result_;
  result_ = ValueArena::kNoValue;
  return r;
}

StepStatus PickleMachine::append_to(ValueId list, ValueId item, const PickleInstr& in) {
  std::string err;
  const AppendAction action = sink_.on_append(arena_, list, item, in.offset, err);
  if (!err.empty()) {
    arena_.release(item);
    error_ = err;
    return StepStatus::kError;
  }
  if (action == AppendAction::kConsumed) arena_.release(item);
  else arena_.add(list, item);
  return StepStatus::kContinue;
}

StepStatus PickleMachine::memo_put(uint64_t index, const PickleInstr& in) {
  if (stack_.empty()) return fail(in, "nothing on the stack to store");
  if (index >= limits_.max_memo_index)
    return fail(in, fmt::format("memo slot {} is beyond the reader's limit of {}", index, limits_.max_memo_index));
  if (referenced_ && (index >= referenced_->size() || !(*referenced_)[index])) return StepStatus::kContinue;
  const ValueId v = stack_.back();
  arena_.retain(v);
  if (const ValueId old = memo_.put(index, v); old != ValueArena::kNoValue) arena_.release(old);
  return StepStatus::kContinue;
}

StepStatus PickleMachine::memo_get(uint64_t index, const PickleInstr& in) {
  const ValueId v = memo_.find(index);
  if (v == ValueArena::kNoValue) return fail(in, fmt::format("memo slot {} was never stored", index));
  arena_.retain(v);
  if (!push(v)) return fail(in, "the stack is over the reader's limit");
  return StepStatus::kContinue;
}

// Protocol 0 INT / LONG / FLOAT: decimal text ("01"/"00" are True/False).
StepStatus PickleMachine::text_number(const PickleInstr& in) {
  std::string_view t = in.text;
  ValueId v;
  if (in.op == PickleOp::kFloat) {
    const std::string s(t);
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) return fail(in, fmt::format("'{}' is not a number", s));
    v = arena_.real(d);
  } else if (in.op == PickleOp::kInt && (t == "00" || t == "01")) {
    v = arena_.boolean(t == "01");
  } else {
    if (in.op == PickleOp::kLong && !t.empty() && t.back() == 'L') t.remove_suffix(1);
    int64_t x = 0;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), x);
    if (r.ec == std::errc::result_out_of_range) {
      v = arena_.big_integer();
    } else if (r.ec != std::errc() || r.ptr != t.data() + t.size() || t.empty()) {
      return fail(in, fmt::format("'{}' is not an integer", std::string(t)));
    } else {
      v = arena_.integer(x);
    }
  }
  if (!push(v)) return fail(in, "the stack is over the reader's limit");
  return StepStatus::kContinue;
}

StepStatus PickleMachine::step(const PickleInstr& in) {
  if (is_refused(in.op)) return fail(in, refusal(in));
  auto pushed = [&](ValueId v) {
    return push(v) ? StepStatus::kContinue : fail(in, "the stack is over the reader's limit");
  };
  auto need = [&](size_t n) { return stack_.size() >= n + (marks_.empty() ? 0 : marks_.back()); };
  switch (in.op) {
    case PickleOp::kProto:
      if (in.number > 5) return fail(in, fmt::format("pickle protocol {} is newer than 5", in.number));
      protocol_ = static_cast<int>(in.number);
      return StepStatus::kContinue;
    case PickleOp::kFrame:
      return StepStatus::kContinue;  // framing is advisory
    case PickleOp::kStop:
      if (stack_.empty()) return fail(in, "the stack is empty: no value to return");
      result_ = pop();
      return StepStatus::kStop;
    case PickleOp::kMark:
      if (stack_.size() + marks_.size() >= limits_.max_stack) return fail(in, "the stack is over the reader's limit");
      marks_.push_back(stack_.size());
      return StepStatus::kContinue;
    case PickleOp::kPop:
      if (need(1)) {
        arena_.release(pop());
      } else if (!marks_.empty() && stack_.size() == marks_.back()) {
        marks_.pop_back();  // as Python's unpickler does: POP of a bare mark
      } else {
        return fail(in, "nothing to pop");
      }
      return StepStatus::kContinue;
    case PickleOp::kPopMark: {
      size_t first;
      if (!items_since_mark(first)) return fail(in, "no mark to pop to");
      while (stack_.size() > first) arena_.release(pop());
      return StepStatus::kContinue;
    }
    case PickleOp::kDup:
      if (!need(1)) return fail(in, "nothing to duplicate");
      arena_.retain(stack_.back());
      return pushed(stack_.back());
    case PickleOp::kNone:
      return pushed(arena_.none());
    case PickleOp::kNewTrue:
    case PickleOp::kNewFalse:
      return pushed(arena_.boolean(in.op == PickleOp::kNewTrue));
    case PickleOp::kInt:
    case PickleOp::kLong:
    case PickleOp::kFloat:
      return text_number(in);
    case PickleOp::kBinInt:
      return pushed(arena_.integer(static_cast<int64_t>(in.number)));
    case PickleOp::kBinInt1:
    case PickleOp::kBinInt2:
      return pushed(arena_.integer(static_cast<int64_t>(in.number)));
    case PickleOp::kBinFloat:
      return pushed(arena_.real(in.real));
    case PickleOp::kLong1:
    case PickleOp::kLong4: {
      // Little-endian two's complement of any length.
      const std::string_view b = in.text;
      if (b.empty()) return pushed(arena_.integer(0));
      const bool negative = static_cast<uint8_t>(b.back()) & 0x80;
      size_t n = b.size();
      // Drop sign-only high bytes (0x00 for positive, 0xff for negative values).
      while (n > 1 && static_cast<uint8_t>(b[n - 1]) == (negative ? 0xff : 0x00)) --n;
      if (n > 8) return pushed(arena_.big_integer());
      uint64_t u = 0;
      for (size_t i = n; i-- > 0;) u = (u << 8) | static_cast<uint8_t>(b[i]);
      if (negative) {
        if (n < 8) u |= ~uint64_t{0} << (8 * n);  // sign-extend
        if (n == 8 && !(u >> 63)) return pushed(arena_.big_integer());  // below INT64_MIN
        return pushed(arena_.integer(static_cast<int64_t>(u)));
      }
      return pushed(arena_.unsigned_integer(u));
    }
    case PickleOp::kString: {
      std::string_view t = in.text;  // a Python 2 str repr: 'text' or "text"
      if (t.size() < 2 || t.front() != t.back() || (t.front() != '\'' && t.front() != '"'))
        return fail(in, "a STRING argument must be quoted");
      return pushed(arena_.text(t.substr(1, t.size() - 2)));
    }
    case PickleOp::kBinString:
    case PickleOp::kShortBinString:
    case PickleOp::kBinUnicode:
    case PickleOp::kShortBinUnicode:
    case PickleOp::kBinUnicode8:
      return pushed(arena_.text(in.text));
    case PickleOp::kUnicode: {
      std::string utf8;
      if (!raw_unicode_escape(in.text, utf8)) return fail(in, "a bad \\u escape");
      return pushed(arena_.text(utf8));
    }
    case PickleOp::kBinBytes:
    case PickleOp::kShortBinBytes:
    case PickleOp::kBinBytes8:
    case PickleOp::kByteArray8:
      return pushed(arena_.bytes(in.text));
    case PickleOp::kEmptyList:
      return pushed(arena_.container(ValueKind::kList));
    case PickleOp::kEmptyDict:
      return pushed(arena_.container(ValueKind::kDict));
    case PickleOp::kEmptyTuple:
      return pushed(arena_.container(ValueKind::kTuple));
    case PickleOp::kEmptySet:
      return pushed(arena_.container(ValueKind::kSet));
    case PickleOp::kList:
    case PickleOp::kTuple:
    case PickleOp::kDict:
    case PickleOp::kFrozenSet: {
      size_t first;
      if (!items_since_mark(first)) return fail(in, "no mark before the items");
      const ValueKind kind = in.op == PickleOp::kList    ? ValueKind::kList
                             : in.op == PickleOp::kTuple ? ValueKind::kTuple
                             : in.op == PickleOp::kDict  ? ValueKind::kDict
                                                         : ValueKind::kSet;
      if (kind == ValueKind::kDict && (stack_.size() - first) % 2 != 0)
        return fail(in, "an odd number of keys and values");
      const ValueId c = arena_.container(kind);
      for (size_t i = first; i < stack_.size(); ++i) arena_.add(c, stack_[i]);
      stack_.resize(first);
      return pushed(c);
    }
    case PickleOp::kTuple1:
    case PickleOp::kTuple2:
    case PickleOp::kTuple3: {
      const size_t n = static_cast<uint8_t>(in.op) - static_cast<uint8_t>(PickleOp::kTuple1) + 1;
      if (!need(n)) return fail(in, "too few values on the stack");
      const ValueId c = arena_.container(ValueKind::kTuple);
      for (size_t i = stack_.size() - n; i < stack_.size(); ++i) arena_.add(c, stack_[i]);
      stack_.resize(stack_.size() - n);
      return pushed(c);
    }
    case PickleOp::kAppend: {
      if (!need(2)) return fail(in, "too few values on the stack");
      const ValueId item = pop();
      const ValueId list = stack_.back();
      if (arena_.kind(list) != ValueKind::kList) {
        arena_.release(item);
        return fail(in, "the target is not a list");
      }
      return append_to(list, item, in);
    }
    case PickleOp::kAppends:
    case PickleOp::kSetItems:
    case PickleOp::kAddItems: {
      size_t first;
      if (!items_since_mark(first)) return fail(in, "no mark before the items");
      if (first == 0 || (!marks_.empty() && first <= marks_.back())) return fail(in, "no container below the mark");
      const ValueId target = stack_[first - 1];
      const ValueKind want = in.op == PickleOp::kAppends    ? ValueKind::kList
                             : in.op == PickleOp::kSetItems ? ValueKind::kDict
                                                            : ValueKind::kSet;
      if (arena_.kind(target) != want) return fail(in, "the target has the wrong type");
      if (want == ValueKind::kDict && (stack_.size() - first) % 2 != 0)
        return fail(in, "an odd number of keys and values");
      StepStatus status = StepStatus::kContinue;
      for (size_t i = first; i < stack_.size(); ++i) {
        if (status != StepStatus::kContinue) {
          arena_.release(stack_[i]);
        } else if (want == ValueKind::kList) {
          status = append_to(target, stack_[i], in);
        } else {
          arena_.add(target, stack_[i]);
        }
      }
      stack_.resize(first);
      return status;
    }
    case PickleOp::kSetItem: {
      if (!need(3)) return fail(in, "too few values on the stack");
      const ValueId value = pop(), key = pop();
      const ValueId dict = stack_.back();
      if (arena_.kind(dict) != ValueKind::kDict) {
        arena_.release(value), arena_.release(key);
        return fail(in, "the target is not a dict");
      }
      arena_.add(dict, key);
      arena_.add(dict, value);
      return StepStatus::kContinue;
    }
    case PickleOp::kPut: {
      uint64_t index = 0;
      const auto r = std::from_chars(in.text.data(), in.text.data() + in.text.size(), index);
      if (r.ec != std::errc() || r.ptr != in.text.data() + in.text.size()) return fail(in, "a bad memo index");
      return memo_put(index, in);
    }
    case PickleOp::kBinPut:
    case PickleOp::kLongBinPut:
      return memo_put(in.number, in);
    case PickleOp::kMemoize: {
      const StepStatus s = memo_put(next_memo_, in);
      ++next_memo_;
      return s;
    }
    case PickleOp::kGet: {
      uint64_t index = 0;
      const auto r = std::from_chars(in.text.data(), in.text.data() + in.text.size(), index);
      if (r.ec != std::errc() || r.ptr != in.text.data() + in.text.size()) return fail(in, "a bad memo index");
      return memo_get(index, in);
    }
    case PickleOp::kBinGet:
    case PickleOp::kLongBinGet:
      return memo_get(in.number, in);
    default:
      break;
  }
  return fail(in, "unknown opcode");
}

std::string find_memo_references(PickleScanner& scanner, const PickleLimits& limits, std::vector<bool>& referenced) {
  referenced.clear();
  PickleInstr in;
  uint64_t defined = 0;  // memo slots stored so far: a GET beyond them is left for pass 2 to report
  for (;;) {
    const ScanStatus s = scanner.next(in);
    if (s == ScanStatus::kError) return scanner.error();
    if (s == ScanStatus::kEnd) return "";
    if (is_refused(in.op))
      return fmt::format("{} at offset {}: {}", pickle_op_info(static_cast<uint8_t>(in.op)).name, in.offset,
                         refusal(in));
    uint64_t index = 0;
    bool is_get = false;
    switch (in.op) {
      case PickleOp::kMemoize:
        ++defined;
        break;
      case PickleOp::kBinPut:
      case PickleOp::kLongBinPut:
        if (in.number < limits.max_memo_index && in.number + 1 > defined) defined = in.number + 1;
        break;
      case PickleOp::kPut:
        if (std::from_chars(in.text.data(), in.text.data() + in.text.size(), index).ec == std::errc() &&
            index < limits.max_memo_index && index + 1 > defined)
          defined = index + 1;
        break;
      case PickleOp::kBinGet:
      case PickleOp::kLongBinGet:
        index = in.number, is_get = true;
        break;
      case PickleOp::kGet:
        is_get = std::from_chars(in.text.data(), in.text.data() + in.text.size(), index).ec == std::errc();
        break;
      case PickleOp::kStop:
        return "";
      default:
        break;
    }
    if (is_get && index < defined && index < limits.max_memo_index) {
      if (index >= referenced.size()) referenced.resize(index + 1 + index / 4);
      referenced[index] = true;
    }
  }
}

}  // namespace stepscope::trace::snapshot
