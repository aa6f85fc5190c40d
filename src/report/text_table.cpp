#include "report/text_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/printable_text.h"
#include "report/terminal_text.h"

namespace stepscope::report {

namespace {
size_t width(const std::string& s) { return display_width(s); }
}  // namespace

void TextTable::add_column(std::string header, Align align) { columns_.push_back({std::move(header), align}); }

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  // Cells hold names from traces: no control character reaches the terminal.
  for (auto& c : cells) c = printable_text(c);
  rows_.push_back(std::move(cells));
}

void TextTable::add_separator() { rows_.emplace_back(); }

std::string TextTable::render(int indent) const {
  std::vector<size_t> w(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    w[c] = width(columns_[c].header);
    for (const auto& r : rows_)
      if (!r.empty()) w[c] = std::max(w[c], width(r[c]));
  }
  size_t total = 0;
  for (size_t x : w) total += x + 2;
  std::string pad(static_cast<size_t>(indent), ' ');
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    out += pad;
    for (size_t c = 0; c < columns_.size(); ++c) {
      size_t fill = w[c] - width(cells[c]);
      bool right = columns_[c].align == Align::kRight;
      if (right) out.append(fill, ' ');
      out += cells[c];
      if (!right && c + 1 < columns_.size()) out.append(fill, ' ');
      if (c + 1 < columns_.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  };
  std::vector<std::string> headers;
  for (const auto& c : columns_) headers.push_back(c.header);
  line(headers);
  out += pad + std::string(total > 2 ? total - 2 : 0, '-') + '\n';
  for (const auto& r : rows_) {
    if (r.empty()) {
      out += pad + std::string(total > 2 ? total - 2 : 0, '-') + '\n';
    } else {
      line(r);
    }
  }
  return out;
}

std::string fmt_ms(double us) { return fmt::format("{:.3f}", us / 1000.0); }
std::string fmt_us(double us) { return fmt::format("{:.1f}", us); }
std::string fmt_pct(double pct) { return fmt::format("{:.1f}%", pct); }

std::string fmt_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = b;
  while (std::abs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", v) : fmt::format("{:.2f} {}", v, units[u]);
}

std::string fmt_count(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string shorten(std::string_view name, size_t max_chars) {
  if (name.size() <= max_chars) return std::string(name);
  // Keep the head (the kernel's identity) and mark the cut, at a character
  // boundary: a cut inside a UTF-8 sequence would print as escaped bytes.
  size_t cut = max_chars > 3 ? max_chars - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  return std::string(name.substr(0, cut)) + "...";
}

}  // namespace stepscope::report
