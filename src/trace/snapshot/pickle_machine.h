// A restricted unpickler: executes the opcodes that build plain data (see
// pickle_value.h) and refuses every opcode that would name a Python global,
// construct an object or fetch an out-of-band buffer, with a one-line error
// naming the opcode and its byte offset. Nothing in the file can make it
// run code or allocate beyond the limits below.
//
// Memory stays bounded on multi-GB files in two ways. The memo keeps only
// the entries some later GET reads (memo_references.h finds them in a first
// pass), and each item appended to a list is offered to a sink, which may
// turn it into a table row and leave a small handle, or take it away.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/snapshot/memo_table.h"
#include "trace/snapshot/pickle_scanner.h"
#include "trace/snapshot/pickle_value.h"

namespace stepscope::trace::snapshot {

struct PickleLimits {
  uint64_t max_argument_bytes = 64ull << 20;  // one string or bytes value
  size_t max_stack = 1u << 22;                // values and marks on the stack
  uint64_t max_memo_index = 1ull << 28;       // memo slots (PUT indices, MEMOIZE count)
};

// What a sink does with an item appended to a list.
enum class AppendAction {
  kKeep,      // store it in the list (as it is now: the sink may have made it a handle)
  kConsumed,  // the sink took it: the list does not keep it
};

class PickleSink {
 public:
  virtual ~PickleSink() = default;
  // `list` is the list's value (its serial identifies it), `item` the value
  // appended. An error stops the read: return it in `error`.
  virtual AppendAction on_append(ValueArena& arena, ValueId list, ValueId item, uint64_t offset,
                                 std::string& error) = 0;
};

enum class StepStatus { kContinue, kStop, kError };

class PickleMachine {
 public:
  // `referenced`: bit i set when memo slot i is read by some GET (null: keep
  // every memo entry).
  PickleMachine(ValueArena& arena, PickleSink& sink, const std::vector<bool>* referenced,
                const PickleLimits& limits);
  ~PickleMachine();

  StepStatus step(const PickleInstr& in);
  const std::string& error() const { return error_; }
  // After kStop: the pickled value (one reference, the caller's).
  ValueId take_result();
  int protocol() const { return protocol_; }

 private:
  StepStatus fail(const PickleInstr& in, const std::string& what);
  bool push(ValueId v);
  ValueId pop();
  // Index of the first stack value above the last mark; -1 without a mark.
  bool items_since_mark(size_t& first);
  StepStatus append_to(ValueId list, ValueId item, const PickleInstr& in);
  StepStatus memo_put(uint64_t index, const PickleInstr& in);
  StepStatus memo_get(uint64_t index, const PickleInstr& in);
  StepStatus text_number(const PickleInstr& in);

  ValueArena& arena_;
  PickleSink& sink_;
  const std::vector<bool>* referenced_;
  PickleLimits limits_;
  std::vector<ValueId> stack_;
  std::vector<size_t> marks_;
  MemoTable memo_;
  uint64_t next_memo_ = 0;  // MEMOIZE's next slot
  int protocol_ = 0;
  ValueId result_ = ValueArena::kNoValue;
  std::string error_;
};

// Whether an opcode is refused, and why ("" for the opcodes the machine executes).
bool is_refused(PickleOp op);
std::string refusal(const PickleInstr& in);

// Pass 1: which memo slots a GET reads, from a scan that executes nothing.
// Returns "" or a one-line error (malformed stream, a slot beyond the limit).
std::string find_memo_references(PickleScanner& scanner, const PickleLimits& limits, std::vector<bool>& referenced);

}  // namespace stepscope::trace::snapshot
