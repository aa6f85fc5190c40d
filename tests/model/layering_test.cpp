// The layers that share hardware and model facts include only the model
// layer for them (docs/architecture.md, "may use"): the model layer includes
// nothing of stepscope's, and plan, bench and monitor reach neither into the
// diagnosis nor into the reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "test_paths.h"

namespace stepscope::model {
namespace {

namespace fs = std::filesystem;

// "file: layer" for every #include "layer/..." of src/<folder>/ outside `allowed`.
std::vector<std::string> includes_outside(const std::string& folder, const std::set<std::string>& allowed) {
  std::vector<std::string> bad;
  const std::regex include(R"re(^\s*#\s*include\s+"([a-z_]+)/)re");
  const fs::path root = fs::path(testing::source_dir()) / "src" / folder;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".h" && ext != ".cpp" && ext != ".cu") continue;
    std::ifstream in(entry.path());
    std::smatch m;
    for (std::string line; std::getline(in, line);)
      if (std::regex_search(line, m, include) && !allowed.count(m[1].str()))
        bad.push_back(fs::relative(entry.path(), root.parent_path()).string() + ": " + m[1].str());
  }
  return bad;
}

TEST(Layering, TheModelLayerStandsAlone) { EXPECT_EQ(includes_outside("model", {"model"}), std::vector<std::string>{}); }

TEST(Layering, PlanBenchAndMonitorTakeHardwareAndModelFactsFromTheModelLayerOnly) {
  EXPECT_EQ(includes_outside("plan", {"plan", "model"}), std::vector<std::string>{});
  EXPECT_EQ(includes_outside("hwbench", {"hwbench", "model"}), std::vector<std::string>{});
  EXPECT_EQ(includes_outside("monitor", {"monitor", "model"}), std::vector<std::string>{});
}

TEST(Layering, TheCheckSeesIncludes) {
  // The diagnosis does include other layers: the scan must find them.
  EXPECT_FALSE(includes_outside("diagnose", {"diagnose"}).empty());
}

}  // namespace
}  // namespace stepscope::model
