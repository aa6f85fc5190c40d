// The tree a summary body is decoded into before its structs are filled:
// nlohmann's JSON value with its objects, arrays and boxes in the reading
// thread's arena (body_arena.h), so building and dropping it costs no
// malloc/free a node. Strings keep std::string (short ones, most keys, sit in
// it without an allocation). Lives only inside a BodyArenaScope.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "summary/body_arena.h"

namespace stepscope::summary {

// nlohmann's conversions, except that an integer is not read from a float:
// nlohmann casts it, which for a NaN or a value out of the integer's range is
// undefined behaviour (fuzz_summary, 2026-12-06). stepscope writes every
// integer field as a CBOR integer, so a float there is a damaged body.
template <typename T, typename SFINAE = void>
struct BodySerializer {
  template <typename Json, typename U>
  static auto to_json(Json& j, U&& v) -> decltype(nlohmann::adl_serializer<T, SFINAE>::to_json(j, std::forward<U>(v))) {
    nlohmann::adl_serializer<T, SFINAE>::to_json(j, std::forward<U>(v));
  }
  template <typename Json>
  static auto from_json(const Json& j, T& v) -> decltype(nlohmann::adl_serializer<T, SFINAE>::from_json(j, v)) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (j.is_number_float()) throw std::runtime_error("a float where an integer is expected");
    }
    nlohmann::adl_serializer<T, SFINAE>::from_json(j, v);
  }
};

using BodyJson = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t, std::uint64_t, double,
                                      BodyArenaAllocator, BodySerializer>;

}  // namespace stepscope::summary
