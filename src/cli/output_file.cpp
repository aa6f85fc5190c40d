#include "cli/output_file.h"

#include <fstream>
#include <iostream>

namespace stepscope::cli {

bool write_output(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    return static_cast<bool>(std::cout.flush());
  }
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f.flush());
}

}  // namespace stepscope::cli
