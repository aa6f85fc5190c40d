// The pickle opcodes (Python's pickletools, protocols 0-5) and the shape of
// each one's argument, so a scanner can step over any opcode without
// understanding it. Which ones the snapshot reader executes, and which it
// refuses (globals, object construction, out-of-band buffers), is decided by
// the machine (pickle_machine.h), not here.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace stepscope::trace::snapshot {

// How the bytes after an opcode are laid out.
enum class PickleArg : uint8_t {
  kNone,
  kU1,         // 1-byte unsigned
  kU2,         // 2-byte unsigned, little-endian
  kI4,         // 4-byte signed, little-endian
  kU4,         // 4-byte unsigned, little-endian
  kU8,         // 8-byte unsigned, little-endian
  kF8,         // 8-byte IEEE double, big-endian
  kLine,       // text up to and excluding '\n' (protocol 0 numbers, names)
  kLine2,      // two such lines (GLOBAL, INST: module and name)
  kBytesU1,    // 1-byte length, then that many bytes
  kBytesI4,    // 4-byte signed length (negative is an error), then bytes
  kBytesU4,    // 4-byte unsigned length, then bytes
  kBytesU8,    // 8-byte unsigned length, then bytes
};

enum class PickleOp : uint8_t {
  kMark = '(',
  kStop = '.',
  kPop = '0',
  kPopMark = '1',
  kDup = '2',
  kFloat = 'F',
  kInt = 'I',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kLong = 'L',
  kBinInt2 = 'M',
  kNone = 'N',
  kPersId = 'P',
  kBinPersId = 'Q',
  kReduce = 'R',
  kString = 'S',
  kBinString = 'T',
  kShortBinString = 'U',
  kUnicode = 'V',
  kBinUnicode = 'X',
  kAppend = 'a',
  kBuild = 'b',
  kGlobal = 'c',
  kDict = 'd',
  kEmptyDict = '}',
  kAppends = 'e',
  kGet = 'g',
  kBinGet = 'h',
  kInst = 'i',
  kLongBinGet = 'j',
  kList = 'l',
  kEmptyList = ']',
  kObj = 'o',
  kPut = 'p',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kSetItem = 's',
  kTuple = 't',
  kEmptyTuple = ')',
  kSetItems = 'u',
  kBinFloat = 'G',
  kProto = 0x80,
  kNewObj = 0x81,
  kExt1 = 0x82,
  kExt2 = 0x83,
  kExt4 = 0x84,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kLong4 = 0x8b,
  kBinBytes = 'B',
  kShortBinBytes = 'C',
  kShortBinUnicode = 0x8c,
  kBinUnicode8 = 0x8d,
  kBinBytes8 = 0x8e,
  kEmptySet = 0x8f,
  kAddItems = 0x90,
  kFrozenSet = 0x91,
  kNewObjEx = 0x92,
  kStackGlobal = 0x93,
  kMemoize = 0x94,
  kFrame = 0x95,
  kByteArray8 = 0x96,
  kNextBuffer = 0x97,
  kReadOnlyBuffer = 0x98,
};

struct PickleOpInfo {
  bool known = false;
  PickleArg arg = PickleArg::kNone;
  std::string_view name;  // pickletools' name, for messages
};

// What each byte is as an opcode; known = false for a byte that is none.
extern const std::array<PickleOpInfo, 256> kPickleOps;
inline const PickleOpInfo& pickle_op_info(uint8_t code) { return kPickleOps[code]; }

}  // namespace stepscope::trace::snapshot
