#include "trace/snapshot/pickle_opcodes.h"

#include <array>

namespace stepscope::trace::snapshot {
namespace {

struct Entry {
  PickleOp op;
  PickleArg arg;
  std::string_view name;
};

// pickletools.opcodes, in its order.
constexpr Entry kEntries[] = {
    {PickleOp::kInt, PickleArg::kLine, "INT"},
    {PickleOp::kBinInt, PickleArg::kI4, "BININT"},
    {PickleOp::kBinInt1, PickleArg::kU1, "BININT1"},
    {PickleOp::kBinInt2, PickleArg::kU2, "BININT2"},
    {PickleOp::kLong, PickleArg::kLine, "LONG"},
    {PickleOp::kLong1, PickleArg::kBytesU1, "LONG1"},
    {PickleOp::kLong4, PickleArg::kBytesI4, "LONG4"},
    {PickleOp::kString, PickleArg::kLine, "STRING"},
    {PickleOp::kBinString, PickleArg::kBytesI4, "BINSTRING"},
    {PickleOp::kShortBinString, PickleArg::kBytesU1, "SHORT_BINSTRING"},
    {PickleOp::kBinBytes, PickleArg::kBytesU4, "BINBYTES"},
    {PickleOp::kShortBinBytes, PickleArg::kBytesU1, "SHORT_BINBYTES"},
    {PickleOp::kBinBytes8, PickleArg::kBytesU8, "BINBYTES8"},
    {PickleOp::kByteArray8, PickleArg::kBytesU8, "BYTEARRAY8"},
    {PickleOp::kNextBuffer, PickleArg::kNone, "NEXT_BUFFER"},
    {PickleOp::kReadOnlyBuffer, PickleArg::kNone, "READONLY_BUFFER"},
    {PickleOp::kNone, PickleArg::kNone, "NONE"},
    {PickleOp::kNewTrue, PickleArg::kNone, "NEWTRUE"},
    {PickleOp::kNewFalse, PickleArg::kNone, "NEWFALSE"},
    {PickleOp::kUnicode, PickleArg::kLine, "UNICODE"},
    {PickleOp::kShortBinUnicode, PickleArg::kBytesU1, "SHORT_BINUNICODE"},
    {PickleOp::kBinUnicode, PickleArg::kBytesU4, "BINUNICODE"},
    {PickleOp::kBinUnicode8, PickleArg::kBytesU8, "BINUNICODE8"},
    {PickleOp::kFloat, PickleArg::kLine, "FLOAT"},
    {PickleOp::kBinFloat, PickleArg::kF8, "BINFLOAT"},
    {PickleOp::kEmptyList, PickleArg::kNone, "EMPTY_LIST"},
    {PickleOp::kAppend, PickleArg::kNone, "APPEND"},
    {PickleOp::kAppends, PickleArg::kNone, "APPENDS"},
    {PickleOp::kList, PickleArg::kNone, "LIST"},
    {PickleOp::kEmptyTuple, PickleArg::kNone, "EMPTY_TUPLE"},
    {PickleOp::kTuple, PickleArg::kNone, "TUPLE"},
    {PickleOp::kTuple1, PickleArg::kNone, "TUPLE1"},
    {PickleOp::kTuple2, PickleArg::kNone, "TUPLE2"},
    {PickleOp::kTuple3, PickleArg::kNone, "TUPLE3"},
    {PickleOp::kEmptyDict, PickleArg::kNone, "EMPTY_DICT"},
    {PickleOp::kDict, PickleArg::kNone, "DICT"},
    {PickleOp::kSetItem, PickleArg::kNone, "SETITEM"},
    {PickleOp::kSetItems, PickleArg::kNone, "SETITEMS"},
    {PickleOp::kEmptySet, PickleArg::kNone, "EMPTY_SET"},
    {PickleOp::kAddItems, PickleArg::kNone, "ADDITEMS"},
    {PickleOp::kFrozenSet, PickleArg::kNone, "FROZENSET"},
    {PickleOp::kPop, PickleArg::kNone, "POP"},
    {PickleOp::kDup, PickleArg::kNone, "DUP"},
    {PickleOp::kMark, PickleArg::kNone, "MARK"},
    {PickleOp::kPopMark, PickleArg::kNone, "POP_MARK"},
    {PickleOp::kGet, PickleArg::kLine, "GET"},
    {PickleOp::kBinGet, PickleArg::kU1, "BINGET"},
    {PickleOp::kLongBinGet, PickleArg::kU4, "LONG_BINGET"},
    {PickleOp::kPut, PickleArg::kLine, "PUT"},
    {PickleOp::kBinPut, PickleArg::kU1, "BINPUT"},
    {PickleOp::kLongBinPut, PickleArg::kU4, "LONG_BINPUT"},
    {PickleOp::kMemoize, PickleArg::kNone, "MEMOIZE"},
    {PickleOp::kExt1, PickleArg::kU1, "EXT1"},
    {PickleOp::kExt2, PickleArg::kU2, "EXT2"},
    {PickleOp::kExt4, PickleArg::kI4, "EXT4"},
    {PickleOp::kGlobal, PickleArg::kLine2, "GLOBAL"},
    {PickleOp::kStackGlobal, PickleArg::kNone, "STACK_GLOBAL"},
    {PickleOp::kReduce, PickleArg::kNone, "REDUCE"},
    {PickleOp::kBuild, PickleArg::kNone, "BUILD"},
    {PickleOp::kInst, PickleArg::kLine2, "INST"},
    {PickleOp::kObj, PickleArg::kNone, "OBJ"},
    {PickleOp::kNewObj, PickleArg::kNone, "NEWOBJ"},
    {PickleOp::kNewObjEx, PickleArg::kNone, "NEWOBJ_EX"},
    {PickleOp::kProto, PickleArg::kU1, "PROTO"},
    {PickleOp::kStop, PickleArg::kNone, "STOP"},
    {PickleOp::kFrame, PickleArg::kU8, "FRAME"},
    {PickleOp::kPersId, PickleArg::kLine, "PERSID"},
    {PickleOp::kBinPersId, PickleArg::kNone, "BINPERSID"},
};

constexpr std::array<PickleOpInfo, 256> make_table() {
  std::array<PickleOpInfo, 256> table{};
  for (const Entry& e : kEntries) table[static_cast<uint8_t>(e.op)] = {true, e.arg, e.name};
  return table;
}

}  // namespace

// Built at compile time: the scanner looks an opcode up per instruction.
constinit const std::array<PickleOpInfo, 256> kPickleOps = make_table();

}  // namespace stepscope::trace::snapshot
