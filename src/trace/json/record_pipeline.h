// Runs the tokenizer (and the gzip decoding behind it) on a second thread
// while the calling thread parses, for files read alone: a one-rank trace
// would otherwise keep one core busy and leave the other idle.
//
// The background thread copies each record into 256 KB batches; the calling
// thread receives them through the same callbacks, in the same order, with
// the same offsets as tokenize_trace would give, so the resulting store is
// identical. About a quarter of the single-threaded work (inflate,
// structural scan, the copy) moves off the parsing thread.
#pragma once

#include "trace/json/json_tokenizer.h"

namespace stepscope::trace {

TokenizeResult tokenize_trace_pipelined(ByteSource& source, const TokenizerCallbacks& callbacks,
                                        const TokenizerOptions& options = {});

}  // namespace stepscope::trace
