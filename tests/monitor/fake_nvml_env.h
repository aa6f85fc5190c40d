// Points the fake NVML (tests/monitor/fake_nvml) at a control file in a
// temporary folder for the life of one test.
#pragma once

#include <cstdlib>
#include <string>

#include "trace/trace_fixtures.h"

namespace stepscope::testing {

inline std::string fake_nvml_path() { return STEPSCOPE_FAKE_NVML_PATH; }

class FakeNvml {
 public:
  explicit FakeNvml(const std::string& config) {
    path_ = dir_.write("fake_nvml.cfg", config);
    ::setenv("STEPSCOPE_FAKE_NVML", path_.c_str(), 1);
  }
  ~FakeNvml() { ::unsetenv("STEPSCOPE_FAKE_NVML"); }
  // Replaces the control file (the fake re-reads it on its next call).
  void set(const std::string& config) { dir_.write("fake_nvml.cfg", config + "\n# rev " + std::to_string(++rev_) + "\n"); }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
  std::string path_;
  int rev_ = 0;
};

}  // namespace stepscope::testing
