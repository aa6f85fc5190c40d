// The terminal report of a set with more ranks than fit side by side: the
// attribution table summarises the ranks (min / median / max, the rank with
// the max, shares of all ranks' time) instead of one column per rank, and the
// collective-lateness table keeps the stragglers and the latest ranks, and the
// --compat hta tables the ranks with the largest idle share. With
// 1,024 ranks the report used to be 1,152 lines, the longest 25,467
// characters (17,554 lines with --compat hta).
// Real traces of this many ranks are not at hand: the project's generator
// writes them (tools/synthetic): a modelled GPT training step on every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/hta_compat/run_hta_compat.h"
#include "report/report_fixtures.h"
#include "report/terminal_report.h"
#include "report/terminal_text.h"
#include "report/text_table.h"
#include "synthetic/rank_writer.h"
#include "trace/trace_fixtures.h"

namespace stepscope::report {
namespace {

using testing_support::report_of;

constexpr int kRanks = 12;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The lines of one section: from the line starting with `title` to the next
// empty line.
std::vector<std::string> section(const std::vector<std::string>& lines, const std::string& title) {
  std::vector<std::string> out;
  auto it = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.starts_with(title); });
  for (; it != lines.end() && !it->empty(); ++it) out.push_back(*it);
  return out;
}

class TerminalManyRanks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new stepscope::testing::TempDir();
    synth::SyntheticSpec spec;
    spec.ranks = kRanks;
    spec.layers = 2;
    spec.steps = 2;
    spec.seed = 7;
    for (int r = 0; r < kRanks; ++r) {
      synth::RankFile f = synth::write_rank(spec, r, spec.steps, dir_->path().string());
      ASSERT_TRUE(f.error.empty()) << f.error;
    }
    reported_ = report_of({dir_->path().string()}).release();
  }
  static void TearDownTestSuite() {
    delete reported_;
    delete dir_;
  }
  static stepscope::testing::TempDir* dir_;
  static testing_support::Reported* reported_;
};

stepscope::testing::TempDir* TerminalManyRanks::dir_ = nullptr;
testing_support::Reported* TerminalManyRanks::reported_ = nullptr;

TEST_F(TerminalManyRanks, AttributionSummarisesTheRanksPastTheSideBySideLimit) {
  const AnalyzeReport& r = reported_->report;
  ASSERT_EQ(r.ranks.size(), static_cast<size_t>(kRanks));
  ASSERT_TRUE(r.diagnosis.has_value());
  const auto lines = lines_of(render_terminal(r));
  const auto table = section(lines, "Where step time went");
  ASSERT_GE(table.size(), 5u);
  EXPECT_NE(table[0].find("over 12 ranks"), std::string::npos) << table[0];
  EXPECT_EQ(words_of(table[1]), (std::vector<std::string>{"min", "(ms)", "median", "(ms)", "max", "(ms)", "max", "rank", "share"}));
  for (const auto& l : table) EXPECT_LE(l.size(), 120u) << l;

  // The step-time row, against the attribution itself.
  const auto& att = r.diagnosis->attribution;
  std::vector<std::pair<double, int64_t>> step_us;  // as the renderer: µs, ties to the lowest rank
  for (const auto& a : att) step_us.emplace_back(static_cast<double>(a.mean_step_ns()) / 1000.0, a.rank);
  std::sort(step_us.begin(), step_us.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second > y.second;
  });
  auto row = std::find_if(table.begin(), table.end(), [](const std::string& l) { return l.starts_with("  step time"); });
  ASSERT_NE(row, table.end());
  const auto w = words_of(*row);  // "step", "time", min, median, max, rank, share
  ASSERT_EQ(w.size(), 7u) << *row;
  EXPECT_EQ(w[2], fmt_ms(step_us.front().first));
  EXPECT_EQ(w[3], fmt_ms(step_us[(step_us.size() - 1) / 2].first));
  EXPECT_EQ(w[4], fmt_ms(step_us.back().first));
  EXPECT_EQ(w[5], std::to_string(step_us.back().second));
  EXPECT_EQ(w[6], "100.0%");

  // The buckets' shares are of all ranks' time: they sum to 100% (each is
  // rounded to 0.1%).
  double shares = 0;
  int buckets = 0;
  for (const auto& l : table) {
    if (l.starts_with("  step time") || l.find('%') == std::string::npos || l.starts_with("Where")) continue;
    shares += std::stod(words_of(l).back());
    ++buckets;
  }
  EXPECT_GE(buckets, 3);
  EXPECT_NEAR(shares, 100.0, 0.05 * buckets + 1e-9);
}

// Within the limit, ranks go side by side only while the table fits the
// terminal: twelve column pairs do not, so the summary form is kept.
TEST_F(TerminalManyRanks, RanksStaySideBySideOnlyWhileTheyFit) {
  TerminalOptions o;
  o.max_side_by_side = kRanks;
  const auto table = section(lines_of(render_terminal(reported_->report, o)), "Where step time went");
  ASSERT_GE(table.size(), 2u);
  EXPECT_NE(table[0].find("over 12 ranks"), std::string::npos) << table[0];
  for (const auto& l : table) EXPECT_LE(display_width(l), kTerminalWidth) << l;
}

TEST_F(TerminalManyRanks, LatenessTableKeepsTheStragglersAndTheLatestRanks) {
  const AnalyzeReport& r = reported_->report;
  const auto& c = r.multi.collectives;
  ASSERT_EQ(c.ranks.size(), static_cast<size_t>(kRanks));
  TerminalOptions o;
  o.max_rank_rows = 4;
  o.details = true;  // the lateness table is one of the statistics tables
  const auto lines = lines_of(render_terminal(r, o));
  auto head = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find("latest of 12 ranks") != std::string::npos; });
  ASSERT_NE(head, lines.end());
  // The two note lines, the column titles, the rule, then exactly 4 ranks.
  ASSERT_GT(lines.end() - head, 8);
  EXPECT_NE(head[1].find("multi_rank.collective_skew.ranks"), std::string::npos) << head[1];
  std::vector<int64_t> shown;
  std::vector<double> lateness;
  for (auto it = head + 4; it != head + 8; ++it) {
    const auto w = words_of(*it);
    ASSERT_GE(w.size(), 5u) << *it;
    shown.push_back(std::stoll(w[0]));
    lateness.push_back(std::stod(w[2]));
  }
  EXPECT_TRUE(std::is_sorted(lateness.rbegin(), lateness.rend()));
  // Which ranks: the stragglers first, then the latest of the others.
  std::vector<const analysis::RankLateness*> expect;
  for (const auto& x : c.ranks) expect.push_back(&x);
  std::stable_sort(expect.begin(), expect.end(), [](const auto* x, const auto* y) {
    return x->straggler != y->straggler ? x->straggler : x->mean_lateness_us > y->mean_lateness_us;
  });
  std::vector<int64_t> want;
  for (size_t i = 0; i < 4; ++i) want.push_back(expect[i]->rank);
  std::sort(want.begin(), want.end());
  std::sort(shown.begin(), shown.end());
  EXPECT_EQ(shown, want);
  // A fifth data row would be the next section's line, not a rank.
  EXPECT_TRUE(head[8].find("compute time across ranks") != std::string::npos) << head[8];

  // Up to the limit, every rank in rank order.
  o.max_rank_rows = kRanks;
  const auto all = lines_of(render_terminal(r, o));
  EXPECT_EQ(std::count_if(all.begin(), all.end(), [](const std::string& l) { return l.find("latest of") != std::string::npos; }), 0);
}

TEST_F(TerminalManyRanks, HtaTablesKeepTheRanksWithTheLargestIdleShare) {
  AnalyzeReport r = reported_->report;  // a copy: the HTA tables are added to it only
  r.hta = analysis::hta::run_hta_compat(r.stores, analysis::hta::HtaRelease::k0_6_1);
  ASSERT_EQ(r.hta->temporal_breakdown.size(), static_cast<size_t>(kRanks));
  TerminalOptions o;
  o.max_rank_rows = 4;
  o.details = true;  // the lateness table is one of the statistics tables
  const auto lines = lines_of(render_terminal(r, o));
  auto head = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("ranks with the largest idle share") != std::string::npos;
  });
  ASSERT_NE(head, lines.end());
  // The two note lines, the column titles, the rule, then exactly 4 ranks.
  ASSERT_GT(lines.end() - head, 8);
  std::set<int64_t> shown;
  for (auto it = head + 4; it != head + 8; ++it) shown.insert(std::stoll(words_of(*it)[0]));
  EXPECT_TRUE(head[8].empty()) << "a fifth rank row: " << head[8];

  std::vector<const analysis::hta::HtaTemporalRow*> rows;
  for (const auto& t : r.hta->temporal_breakdown) rows.push_back(&t);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* x, const auto* y) {
    return x->idle_time_pctg.value_or(-1.0) > y->idle_time_pctg.value_or(-1.0);
  });
  std::set<int64_t> want;
  for (size_t i = 0; i < 4; ++i) want.insert(rows[i]->rank);
  EXPECT_EQ(shown, want);

  // The per-rank kernel and idle tables list those ranks only, and each of them.
  auto table_ranks = [&](const std::string& first_title, size_t rank_column) {
    std::set<int64_t> ranks;
    auto t = std::find_if(head, lines.end(), [&](const std::string& l) { return l.starts_with(first_title); });
    EXPECT_NE(t, lines.end()) << first_title;
    for (auto it = t + 2; it != lines.end() && !it->empty() && !it->starts_with("  note"); ++it) {
      const auto w = words_of(*it);
      ranks.insert(std::stoll(w[w.size() - rank_column]));
    }
    return ranks;
  };
  EXPECT_EQ(table_ranks("  kernel  ", 4), want);  // rank, sum, mean, max from the right
  EXPECT_EQ(table_ranks("  rank  stream", 5), want);  // rank stream category idle ratio
}

}  // namespace
}  // namespace stepscope::report
