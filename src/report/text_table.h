// A plain-text table with aligned columns: the terminal report's only
// formatting primitive, so every table lines up the same way.
#pragma once

#include <string>
#include <vector>

namespace stepscope::report {

class TextTable {
 public:
  enum class Align { kLeft, kRight };

  // Headers carry their unit, e.g. "idle (ms)".
  void add_column(std::string header, Align align = Align::kRight);
  void add_row(std::vector<std::string> cells);
  // A full-width line between row groups.
  void add_separator();
  std::string render(int indent = 2) const;
  bool empty() const { return rows_.empty(); }

 private:
  struct Column {
    std::string header;
    Align align;
  };
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a separator
};

// Number formatting shared by the text report.
std::string fmt_ms(double us);          // µs -> "12.345" ms
std::string fmt_us(double us);          // "123.4"
std::string fmt_pct(double pct);        // "12.3%"
std::string fmt_bytes(double bytes);    // "1.50 GiB"
std::string fmt_count(int64_t n);       // "12,345"
// Shortens long kernel names for the terminal (the JSON keeps them whole).
std::string shorten(std::string_view name, size_t max_chars);

}  // namespace stepscope::report
