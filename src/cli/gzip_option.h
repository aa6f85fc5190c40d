// The --gzip option every command that reads traces takes: "isal" (the
// default, trace/gzip_source.h) or "zlib".
#pragma once

#include <string>

#include "trace/byte_source.h"

namespace stepscope::cli {

inline trace::GzipBackend gzip_backend(const std::string& name) {
  return name == "zlib" ? trace::GzipBackend::kZlib : trace::GzipBackend::kIsal;
}

}  // namespace stepscope::cli
