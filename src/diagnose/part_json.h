// The JSON form of what detector parts are made of (examples, a rank's
// saving, the example pool, exact sums, 128-bit counts), so that a rank's
// parts can travel in its summary file (src/summary/) and be merged there.
// Each detector's file defines its own part's form from these and makes
// its detector with split_detector (below).
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "analysis/exact_sum.h"
#include "diagnose/detector_part.h"
#include "diagnose/loader_work.h"

namespace stepscope::analysis {
void to_json(nlohmann::json& j, const ExactSum& s);
void from_json(const nlohmann::json& j, ExactSum& s);  // throws nlohmann::json::exception on a bad state
}  // namespace stepscope::analysis

namespace stepscope::diagnose {

// An exception's message without nlohmann's prefix, for a one-line error:
// "[json.exception.out_of_range.403] key 'steps' not found" -> "key 'steps' not found".
std::string json_error_text(const nlohmann::json::exception& e);

void to_json(nlohmann::json& j, const Example& e);
void from_json(const nlohmann::json& j, Example& e);
void to_json(nlohmann::json& j, const RankSaving& s);
void from_json(const nlohmann::json& j, RankSaving& s);
void to_json(nlohmann::json& j, const ExamplePool& p);
void from_json(const nlohmann::json& j, ExamplePool& p);
void to_json(nlohmann::json& j, const Finding::ReplayPick& r);
void from_json(const nlohmann::json& j, Finding::ReplayPick& r);
void to_json(nlohmann::json& j, const LoaderWorkTime& w);
void from_json(const nlohmann::json& j, LoaderWorkTime& w);

// A signed 128-bit count (exact FLOP sums) as [high 64 bits, low 64 bits].
struct Count128 {
  __int128 value = 0;
  Count128& operator+=(const Count128& o) {
    value += o.value;
    return *this;
  }
  double as_double() const { return static_cast<double>(value); }
};
void to_json(nlohmann::json& j, const Count128& c);
void from_json(const nlohmann::json& j, Count128& c);

template <class P>
nlohmann::json TypedPart<P>::save() const {
  return nlohmann::json(part);
}

// A split detector from its two typed halves (P has merge, set_rank and a
// JSON form).
template <class P>
Detector split_detector(std::string name, Category category, P (*collect)(const RankContext&),
                        DetectorOutput (*finish)(const P&, const JobContext&)) {
  Detector d;
  d.name = std::move(name);
  d.category = category;
  d.collect = [collect](const RankContext& rc) -> std::unique_ptr<DetectorPart> {
    return std::make_unique<TypedPart<P>>(collect(rc));
  };
  d.empty_part = []() -> std::unique_ptr<DetectorPart> { return std::make_unique<TypedPart<P>>(P{}); };
  d.load = [](const nlohmann::json& j) -> std::unique_ptr<DetectorPart> {
    return std::make_unique<TypedPart<P>>(j.template get<P>());
  };
  d.finish = [finish](const DetectorPart& p, const JobContext& job) {
    return finish(static_cast<const TypedPart<P>&>(p).part, job);
  };
  return d;
}

}  // namespace stepscope::diagnose
