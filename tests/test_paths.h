// Where tests find their data. Shared traces (../shared beside the clone) are
// optional: tests that need them call SKIP_WITHOUT_SHARED().
#pragma once

#include <filesystem>
#include <string>

namespace stepscope::testing {

inline std::string shared_dir() { return STEPSCOPE_SHARED_DIR; }
inline std::string test_data_dir() { return STEPSCOPE_TEST_DATA_DIR; }
inline std::string source_dir() { return STEPSCOPE_SOURCE_DIR; }
inline std::string cli_path() { return STEPSCOPE_CLI_PATH; }
inline bool have_shared() { return std::filesystem::is_directory(shared_dir() + "/conformance"); }

}  // namespace stepscope::testing

#define SKIP_WITHOUT_SHARED()                                                            \
  do {                                                                                   \
    if (!::stepscope::testing::have_shared())                                            \
      GTEST_SKIP() << "../shared not found beside the source tree; shared traces skipped"; \
  } while (0)
