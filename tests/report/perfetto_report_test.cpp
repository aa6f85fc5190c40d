// --perfetto output on real traces: valid Chrome JSON that Perfetto loads,
// every stored event re-emitted with its exact ns timestamp, the stepscope
// process with one slice (and one instant) per finding example and one slice
// per attributed step, gzip when asked, and a round trip through stepscope's
// own reader that gives back the same events.
#include <gtest/gtest.h>
#include <zlib.h>

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "report/perfetto_layout.h"  // where each rank landed (pids, shifts)
#include "report/perfetto_report.h"
#include "report/report_fixtures.h"
#include "trace/trace_reader.h"

namespace stepscope::report {
namespace {

using nlohmann::json;
using testing_support::example_trace;
using testing_support::report_of;
using testing_support::scratch_dir;

std::string read_file(const std::filesystem::path& p) {
  gzFile f = gzopen(p.c_str(), "rb");  // reads plain files too
  EXPECT_NE(f, nullptr) << p;
  std::string text;
  char buf[1 << 16];
  int n;
  while (f && (n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  if (f) gzclose(f);
  return text;
}

// The raw text of each traceEvents element's "ph", "pid" and "ts", read with
// the SAX interface so numbers keep every digit (a double cannot hold a
// µs timestamp with ns decimals exactly).
struct RawEvents : nlohmann::json_sax<json> {
  struct Event {
    std::string ph, pid, ts;
  };
  std::vector<Event> events;
  int depth = 0;
  bool in_events = false;
  std::string current;  // the key whose value comes next

  void value(const std::string& raw) {
    if (!in_events || depth != 2) return;
    if (current == "ph") events.back().ph = raw;
    if (current == "pid") events.back().pid = raw;
    if (current == "ts") events.back().ts = raw;
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t v) override { value(std::to_string(v)); return true; }
  bool number_unsigned(number_unsigned_t v) override { value(std::to_string(v)); return true; }
  bool number_float(number_float_t, const string_t& s) override { value(s); return true; }
  bool string(string_t& s) override { value(s); return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    ++depth;
    if (in_events && depth == 2) events.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    if (depth == 1) in_events = k == "traceEvents";
    current = k;
    return true;
  }
  bool end_object() override { --depth; return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& e) override {
    ADD_FAILURE() << "JSON parse error at " << pos << ": " << e.what();
    return false;
  }
};

std::string us_text(int64_t ns) { return fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", std::abs(ns) / 1000, std::abs(ns) % 1000); }

size_t example_count(const diagnose::Diagnosis& d) {
  size_t n = 0;
  for (const auto* list : {&d.findings, &d.minor})
    for (const auto& f : *list) n += f.evidence.examples.size();
  return n;
}

// Resolves a pid/tid as the reader stored it: strings come back as names.
std::string id_text(const trace::EventStore& s, int64_t id) {
  if (id < 0 && static_cast<uint64_t>(-(id + 1)) < s.strings.size())
    return std::string(s.strings.get(static_cast<trace::StringId>(-(id + 1))));
  return std::to_string(id);
}

class PerfettoExample : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(example_trace("dataloader_stall"))) GTEST_SKIP() << "examples/ not found";
    rep = report_of({example_trace("dataloader_stall")});
    ASSERT_TRUE(rep->report.diagnosis.has_value());
    dir = scratch_dir("perfetto");
  }
  std::unique_ptr<testing_support::Reported> rep;
  std::filesystem::path dir;
};

TEST_F(PerfettoExample, ChromeJsonWithFindingsAndAttribution) {
  const auto path = dir / "dataloader_stall.json";
  PerfettoResult r = write_perfetto(rep->report, path.string());
  ASSERT_TRUE(r.ok) << r.error;
  const trace::EventStore& s = *rep->report.stores.front();
  const diagnose::Diagnosis& d = *rep->report.diagnosis;
  EXPECT_EQ(r.trace_events, s.events.size());
  EXPECT_EQ(r.flow_events, s.flows.size());

  const std::string text = read_file(path);
  EXPECT_EQ(r.bytes, text.size());
  json j = json::parse(text);  // throws (fails the test) on invalid JSON
  ASSERT_TRUE(j.contains("traceEvents"));
  ASSERT_TRUE(j["traceEvents"].is_array());
  const int64_t pid = j["stepscope"]["stepscope_pid"].get<int64_t>();

  // The stepscope process is named and holds the annotations.
  bool named = false;
  size_t example_slices = 0, example_instants = 0, step_slices = 0, annotations = 0;
  std::multiset<std::pair<std::string, std::string>> examples_seen;  // (finding, example name)
  for (const auto& e : j["traceEvents"]) {
    if (!e.contains("pid") || !e["pid"].is_number() || e["pid"].get<int64_t>() != pid) continue;
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "process_name") named = e["args"]["name"].get<std::string>().starts_with(kStepscopeProcessName);
      continue;
    }
    ++annotations;
    const std::string cat = e["cat"];
    if (cat.starts_with("stepscope.finding.")) {
      EXPECT_TRUE(e["args"].contains("remedy"));
      EXPECT_TRUE(e["args"].contains("estimated_saving_us"));
      if (ph == "X") {
        ++example_slices;
        examples_seen.insert(std::make_pair(e["args"]["finding"].get<std::string>(), e["args"]["example"].get<std::string>()));
      } else {
        EXPECT_EQ(ph, "i");
        ++example_instants;
      }
    }
    if (cat == "stepscope.attribution" && ph == "X" && e["name"].get<std::string>().starts_with("step ")) ++step_slices;
  }
  EXPECT_TRUE(named);
  EXPECT_EQ(annotations, r.annotation_events);
  ASSERT_GT(example_count(d), 0u) << "the dataloader_stall example should explain itself with examples";
  EXPECT_EQ(example_slices, example_count(d));
  EXPECT_EQ(example_instants, example_count(d));
  std::multiset<std::pair<std::string, std::string>> examples_expected;
  for (const auto* list : {&d.findings, &d.minor})
    for (const auto& f : *list)
      for (const auto& ex : f.evidence.examples) examples_expected.insert({f.title, ex.name});
  EXPECT_EQ(examples_seen, examples_expected);
  EXPECT_EQ(step_slices, d.attribution.front().steps.size());

  // Every stored event comes back in store order with its exact timestamp:
  // µs with exactly three decimals, equal to the source ns.
  RawEvents raw;
  ASSERT_TRUE(json::sax_parse(text, &raw));
  std::vector<RawEvents::Event> stored;
  for (const auto& e : raw.events)
    if ((e.ph == "X" || e.ph == "i") && e.pid != std::to_string(pid)) stored.push_back(e);
  ASSERT_EQ(stored.size(), s.events.size());
  const std::regex three_decimals(R"(^-?\d+\.\d{3}$)");
  for (size_t i = 0; i < s.events.size(); ++i) {
    ASSERT_TRUE(std::regex_match(stored[i].ts, three_decimals)) << "event " << i << ": " << stored[i].ts;
    ASSERT_EQ(stored[i].ts, us_text(s.events.ts_ns[i])) << "event " << i << " (" << s.name_of(i) << ")";
  }
  for (const auto& e : raw.events) {
    if (e.ph != "M") {
      EXPECT_TRUE(std::regex_match(e.ts, three_decimals)) << e.ph << " " << e.ts;
    }
  }
}

TEST_F(PerfettoExample, RoundTripThroughTheReaderGivesTheSameEvents) {
  const auto path = dir / "roundtrip.json.gz";
  PerfettoResult r = write_perfetto(rep->report, path.string());
  ASSERT_TRUE(r.ok) << r.error;
  // Gzip when the name ends in .gz.
  std::ifstream f(path, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  f.read(reinterpret_cast<char*>(magic), 2);
  EXPECT_EQ(magic[0], 0x1f);
  EXPECT_EQ(magic[1], 0x8b);

  const trace::EventStore& a = *rep->report.stores.front();
  trace::EventStore b;
  trace::ReadOutcome out = trace::read_trace_file(path.string(), b, trace::ReadOptions{});
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(b.stats.skipped_records(), 0u);
  EXPECT_EQ(b.rank, a.rank);
  EXPECT_EQ(b.meta.base_time_ns, a.meta.base_time_ns);
  EXPECT_EQ(b.flows.size(), a.flows.size());
  EXPECT_EQ(out.uncompressed_bytes, r.bytes);

  // The stepscope annotations are extra events on their own pid; the rest
  // must be the source events, row for row.
  const int32_t pid = static_cast<int32_t>(plan_trace_layout(rep->report).stepscope_pid);
  std::vector<size_t> rows;
  size_t annotations = 0;
  for (size_t i = 0; i < b.events.size(); ++i) {
    if (b.events.pid[i] == pid) ++annotations;
    else rows.push_back(i);
  }
  EXPECT_EQ(annotations, r.annotation_events);
  ASSERT_EQ(rows.size(), a.events.size());
  std::map<trace::EventKind, int64_t> kinds_a, kinds_b;
  for (size_t i = 0; i < rows.size(); ++i) {
    const size_t k = rows[i];
    ASSERT_EQ(b.events.ts_ns[k], a.events.ts_ns[i]) << i;
    ASSERT_EQ(b.events.dur_ns[k], a.events.dur_ns[i]) << i;
    ASSERT_EQ(b.name_of(k), a.name_of(i)) << i;
    ASSERT_EQ(b.strings.get(b.events.category[k]), a.strings.get(a.events.category[i])) << i;
    ASSERT_EQ(id_text(b, b.events.pid[k]), id_text(a, a.events.pid[i])) << i;
    ASSERT_EQ(id_text(b, b.events.tid[k]), id_text(a, a.events.tid[i])) << i;
    ASSERT_EQ(b.events.stream[k], a.events.stream[i]) << i;
    ASSERT_EQ(b.events.correlation[k], a.events.correlation[i]) << i;
    ASSERT_EQ(b.events.external_id[k], a.events.external_id[i]) << i;
    ASSERT_EQ(b.events.args_count[k], a.events.args_count[i]) << i;
    ++kinds_a[a.events.kind[i]];
    ++kinds_b[b.events.kind[k]];
  }
  EXPECT_EQ(kinds_a, kinds_b);
  EXPECT_EQ(b.gpu_rows.size(), a.gpu_rows.size());
  EXPECT_EQ(b.step_rows.size(), a.step_rows.size());
  // Allocator samples keep their values (the memory timeline reads them).
  const auto ka = a.strings.find("Total Allocated"), kb = b.strings.find("Total Allocated");
  for (size_t i = 0; i < rows.size(); ++i) {
    if (a.events.kind[i] == trace::EventKind::kMemory) {
      ASSERT_EQ(b.arg_int(rows[i], kb), a.arg_int(i, ka)) << i;
    }
  }
}

TEST(PerfettoReport, UnwritablePathIsAnErrorNamingTheFile) {
  if (!std::filesystem::exists(example_trace("cuda_graph"))) GTEST_SKIP() << "examples/ not found";
  auto rep = report_of({example_trace("cuda_graph")});
  PerfettoResult r = write_perfetto(rep->report, "/nonexistent-dir/x.json");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("/nonexistent-dir/x.json"), std::string::npos) << r.error;
}

// Several ranks in one file: pids that two ranks share are renumbered so each
// rank keeps its own tracks, flow ids stay distinct, and no event is lost.
TEST(PerfettoReport, SeveralRanksKeepTheirOwnTracks) {
  SKIP_WITHOUT_SHARED();
  const std::string folder = stepscope::testing::shared_dir() + "/conformance/param/dlrm_8rank";
  auto rep = report_of({folder});
  ASSERT_EQ(rep->report.stores.size(), 8u);
  const auto dir = scratch_dir("perfetto_multi");
  PerfettoResult r = write_perfetto(rep->report, (dir / "dlrm.json.gz").string());
  ASSERT_TRUE(r.ok) << r.error;
  size_t events = 0, flows = 0;
  for (const auto* s : rep->report.stores) events += s->events.size(), flows += s->flows.size();
  EXPECT_EQ(r.trace_events, events);
  EXPECT_EQ(r.flow_events, flows);

  const TraceLayout layout = plan_trace_layout(rep->report);
  std::set<int32_t> written;
  size_t total_pids = 0;
  for (size_t i = 0; i < layout.ranks.size(); ++i) {
    std::set<int32_t> own;
    for (int32_t p : rep->report.stores[i]->events.pid) own.insert(layout.ranks[i].pid(p));
    total_pids += own.size();
    written.insert(own.begin(), own.end());
  }
  EXPECT_EQ(written.size(), total_pids) << "two ranks share a written pid";
  EXPECT_GT(layout.stepscope_pid, *written.rbegin());

  trace::EventStore b;
  trace::ReadOutcome out = trace::read_trace_file((dir / "dlrm.json.gz").string(), b, trace::ReadOptions{});
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(b.events.size(), events + r.annotation_events);
  EXPECT_EQ(b.flows.size(), flows);
  std::set<std::pair<char, int64_t>> ids;
  for (size_t i = 0; i < b.flows.size(); ++i) ids.insert({b.flows.phase[i], b.flows.id[i]});
  std::set<std::pair<char, int64_t>> per_rank;
  size_t distinct = 0;
  for (const auto* s : rep->report.stores) {
    per_rank.clear();
    for (size_t i = 0; i < s->flows.size(); ++i) per_rank.insert({s->flows.phase[i], s->flows.id[i]});
    distinct += per_rank.size();
  }
  EXPECT_EQ(ids.size(), distinct) << "flow ids of different ranks collide";
}

}  // namespace
}  // namespace stepscope::report
