#include "hwbench/gpu/gpu_libraries.h"

#include <dlfcn.h>
#include <fmt/core.h>

#include <mutex>
#include <string>

#include "hwbench/gpu/cuda_check.h"

namespace stepscope::hwbench::gpu {
namespace {

void* open_library(const std::string& soname) {
  void* h = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    throw BenchError(fmt::format("cannot load {}: {} (is the CUDA toolkit's library folder on the loader path?)",
                                 soname, why ? why : "unknown error"));
  }
  return h;
}

// Fills `fn` with the symbol `name` of `lib`, typed as the header declares it.
template <typename Fn>
void bind(void* lib, const std::string& soname, const char* name, Fn& fn) {
  void* p = dlsym(lib, name);
  if (!p) throw BenchError(fmt::format("{} has no symbol {}", soname, name));
  fn = reinterpret_cast<Fn>(p);
}

}  // namespace

const CublasLt& cublaslt() {
  static CublasLt api;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string soname = fmt::format("libcublasLt.so.{}", CUBLAS_VER_MAJOR);
    void* lib = open_library(soname);
#define SS_BIND(field) bind(lib, soname, "cublasLt" #field, api.field)
    SS_BIND(Create);
    SS_BIND(Destroy);
    SS_BIND(GetVersion);
    SS_BIND(Matmul);
    SS_BIND(MatmulAlgoGetHeuristic);
    SS_BIND(MatmulDescCreate);
    SS_BIND(MatmulDescDestroy);
    SS_BIND(MatmulDescSetAttribute);
    SS_BIND(MatmulPreferenceCreate);
    SS_BIND(MatmulPreferenceDestroy);
    SS_BIND(MatmulPreferenceSetAttribute);
    SS_BIND(MatrixLayoutCreate);
    SS_BIND(MatrixLayoutDestroy);
#undef SS_BIND
  });
  return api;
}

#ifdef STEPSCOPE_HAVE_NCCL
const Nccl& nccl() {
  static Nccl api;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string soname = fmt::format("libnccl.so.{}", NCCL_MAJOR);
    void* lib = open_library(soname);
#define SS_BIND(field) bind(lib, soname, "nccl" #field, api.field)
    SS_BIND(AllGather);
    SS_BIND(AllReduce);
    SS_BIND(Broadcast);
    SS_BIND(CommDestroy);
    SS_BIND(CommInitAll);
    SS_BIND(GetErrorString);
    SS_BIND(GetVersion);
    SS_BIND(GroupEnd);
    SS_BIND(GroupStart);
    SS_BIND(Recv);
    SS_BIND(ReduceScatter);
    SS_BIND(Send);
#undef SS_BIND
  });
  return api;
}
#endif

}  // namespace stepscope::hwbench::gpu
