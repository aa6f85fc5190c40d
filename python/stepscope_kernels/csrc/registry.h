// One registration function per kernel family; module.cpp calls them all.
// Each lives in its own <name>_binding.cpp, so adding a kernel family is a new
// file plus one line here and one in module.cpp.
#pragma once

#include <torch/extension.h>

#include <stdexcept>
#include <utility>

// Argument checks throw std::runtime_error (Python RuntimeError), and every
// bound function turns a c10::Error from inside torch into one too: on the
// H200 device image (PyTorch 2.11+cu130, GCC 13.3) a c10::Error leaving an
// extension crashed the interpreter (measured 2026-12-01: a four-line
// load_inline module segfaults on TORCH_CHECK(false), while std::runtime_error
// and pybind11::value_error reach Python as exceptions).
#define STEPSCOPE_CHECK(cond, ...)                                      \
  do {                                                                  \
    if (!(cond)) throw std::runtime_error(c10::str(__VA_ARGS__));       \
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
