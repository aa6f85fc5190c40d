// One registration function per kernel family; module.cpp calls them all.
// Each lives in its own <name>_binding.cpp, so adding a kernel family is a new
// file plus one line here and one in module.cpp.
#pragma once

#include <torch/extension.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

// Argument checks throw std::runtime_error (Python RuntimeError) with a
// message built without c10::str, and every bound function turns a
// c10::Error from inside torch into a std::runtime_error. On the H200 device
// image (PyTorch 2.11+cu130, extensions built by GCC 13.3) formatting through
// c10::str -- an std::ostringstream instantiated in the extension -- crashed
// the interpreter, so TORCH_CHECK (which formats with it) did too (measured
// 2026-12-01: a load_inline module throwing std::runtime_error(c10::str(...))
// segfaults, one throwing std::runtime_error("...") raises RuntimeError).
namespace stepscope_binding {

inline void append(std::string& s, const char* v) { s += v; }
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, c10::ScalarType t) { s += c10::toString(t); }
inline void append(std::string& s, const c10::Device& d) { s += d.str(); }
inline void append(std::string& s, c10::IntArrayRef r) {
  s += '[';
  for (size_t i = 0; i < r.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(r[i]);
  }
  s += ']';
}
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
void append(std::string& s, T v) {
  s += std::to_string(v);
}

template <typename... Args>
std::string message(const Args&... args) {
  std::string s;
  (append(s, args), ...);
  return s;
}

}  // namespace stepscope_binding

#define STEPSCOPE_CHECK(cond, ...)                                                    \
  do {                                                                                \
    if (!(cond)) throw std::runtime_error(stepscope_binding::message(__VA_ARGS__));   \
  } while (0)

template <typename R, typename... A>
auto guarded(R (*fn)(A...)) {
  return [fn](A... args) -> R {
    try {
      return fn(std::forward<A>(args)...);
    } catch (const c10::Error& e) {
      throw std::runtime_error(e.what_without_backtrace());
    }
  };
}

void register_qkv_rope(pybind11::module_& m);               // qkv_rope_binding.cpp
void register_loss_scaler(pybind11::module_& m);            // loss_scaler_binding.cpp
void register_activation_compression(pybind11::module_& m);  // activation_compression_binding.cpp
void register_block_sparse_attention(pybind11::module_& m);  // block_sparse_attention_binding.cpp
void register_image_augment(pybind11::module_& m);           // image_augment_binding.cpp
