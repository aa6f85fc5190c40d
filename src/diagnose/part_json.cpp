#include "diagnose/part_json.h"

#include <limits>

namespace stepscope::analysis {

void to_json(nlohmann::json& j, const ExactSum& s) {
  j = nlohmann::json{{"partials", s.partials()}};
  if (s.has_special()) j["special"] = s.special();
}

void from_json(const nlohmann::json& j, ExactSum& s) {
  // JSON has no infinities: a non-finite sum is written as null (and read
  // back as NaN, which is what such a sum shows anyway).
  const bool special = j.contains("special");
  const double value = special && j.at("special").is_number() ? j.at("special").get<double>()
                                                              : std::numeric_limits<double>::quiet_NaN();
  if (!s.restore(j.at("partials").get<std::vector<double>>(), special, value))
    throw nlohmann::json::other_error::create(501, "exact sum: not a valid state", &j);
}

}  // namespace stepscope::analysis

namespace stepscope::diagnose {

std::string json_error_text(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (const size_t close = what.find("] "); what.rfind("[json.exception", 0) == 0 && close != std::string::npos)
    what.erase(0, close + 2);
  return what;
}

// The declarations in part_json.h are what other files link to, so these
// are written out rather than made by NLOHMANN_DEFINE_TYPE_* (inline).
void to_json(nlohmann::json& j, const Example& e) {
  j = {{"rank", e.rank},     {"step", e.step},     {"ts_ns", e.ts_ns},
       {"dur_ns", e.dur_ns}, {"name", e.name},     {"detail", e.detail},
       {"step_offset_ns", e.step_offset_ns}, {"source", e.source}, {"timed", e.timed}};
}
void from_json(const nlohmann::json& j, Example& e) {
  j.at("rank").get_to(e.rank);
  j.at("step").get_to(e.step);
  j.at("ts_ns").get_to(e.ts_ns);
  j.at("dur_ns").get_to(e.dur_ns);
  j.at("name").get_to(e.name);
  j.at("detail").get_to(e.detail);
  j.at("step_offset_ns").get_to(e.step_offset_ns);
  j.at("source").get_to(e.source);
  j.at("timed").get_to(e.timed);
}

void to_json(nlohmann::json& j, const RankSaving& s) {
  j = {{"valid", s.valid}, {"rank", s.rank}, {"us", s.us}, {"step_us", s.step_us}};
}
void from_json(const nlohmann::json& j, RankSaving& s) {
  j.at("valid").get_to(s.valid);
  j.at("rank").get_to(s.rank);
  j.at("us").get_to(s.us);
  j.at("step_us").get_to(s.step_us);
}

void to_json(nlohmann::json& j, const Finding::ReplayPick& r) {
  j = {{"rank", r.rank}, {"saving_ns", r.saving_ns}, {"step_ns", r.step_ns}};
}
void from_json(const nlohmann::json& j, Finding::ReplayPick& r) {
  j.at("rank").get_to(r.rank);
  j.at("saving_ns").get_to(r.saving_ns);
  j.at("step_ns").get_to(r.step_ns);
}

void to_json(nlohmann::json& j, const LoaderWorkTime& w) {
  j = {{"ns", w.ns}, {"calls_ns", w.calls_ns}, {"saw_python_frames", w.saw_python_frames}};
}
void from_json(const nlohmann::json& j, LoaderWorkTime& w) {
  j.at("ns").get_to(w.ns);
  j.at("calls_ns").get_to(w.calls_ns);
  j.at("saw_python_frames").get_to(w.saw_python_frames);
}

void to_json(nlohmann::json& j, const ExamplePool& p) {
  j = nlohmann::json::array();
  for (const auto& [weight, example] : p.candidates_) j.push_back({{"weight", weight}, {"example", example}});
}

void from_json(const nlohmann::json& j, ExamplePool& p) {
  p = ExamplePool{};
  for (const auto& c : j) p.add(c.at("weight").get<double>(), c.at("example").get<Example>());
  p.trim();
}

void to_json(nlohmann::json& j, const Count128& c) {
  const auto u = static_cast<unsigned __int128>(c.value);
  j = nlohmann::json::array({static_cast<uint64_t>(u >> 64), static_cast<uint64_t>(u)});
}

void from_json(const nlohmann::json& j, Count128& c) {
  const auto hi = j.at(0).get<uint64_t>(), lo = j.at(1).get<uint64_t>();
  c.value = static_cast<__int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
}

}  // namespace stepscope::diagnose
