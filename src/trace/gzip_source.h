// Streaming gzip decoders behind ByteSource. ISA-L's igzip is the default:
// it inflates several times faster than zlib and, unlike libdeflate, streams,
// so memory stays bounded by the chunk size (see docs/performance.md).
#pragma once

#include <memory>

#include "trace/byte_source.h"

namespace stepscope::trace {

// Takes ownership of `fd`, positioned at the start of the gzip data.
std::unique_ptr<ByteSource> make_gzip_source(int fd, GzipBackend backend);

}  // namespace stepscope::trace
