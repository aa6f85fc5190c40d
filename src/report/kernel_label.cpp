#include "report/kernel_label.h"

#include "report/text_table.h"

namespace stepscope::report {
namespace {

void erase_all(std::string& s, std::string_view what) {
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at)) s.erase(at, what.size());
}

}  // namespace

std::string kernel_label(std::string_view name, size_t max_chars) {
  std::string s(name);
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  erase_all(s, "(anonymous namespace)::");
  erase_all(s, "at::native::");
  erase_all(s, "c10::");
  // The argument list repeats the template arguments: cut at the first '('
  // outside template brackets that opens a call, i.e. follows the name
  // without a space ("Memset (Device)" is a name, not a call).
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '<') ++depth;
    if (c == '>' && depth > 0) --depth;
    if (c == '(' && depth == 0) {
      if (i > 0 && s[i - 1] != ' ') {
        s.resize(i);
        break;
      }
    }
  }
  return shorten(s, max_chars);
}

}  // namespace stepscope::report
