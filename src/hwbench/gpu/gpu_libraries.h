// cuBLASLt and NCCL, opened with dlopen the first time `stepscope bench`
// needs them. Linking them into the binary would load them into every
// process: cuBLASLt alone added about 185 MB of resident memory to
// `stepscope analyze`, which never touches a GPU. The CUDA runtime is linked
// statically and initialises lazily, so it costs nothing until used.
#pragma once

#include <cublasLt.h>

#ifdef STEPSCOPE_HAVE_NCCL
#include <nccl.h>
#endif

namespace stepscope::hwbench::gpu {

// The cuBLASLt entry points the GEMM sweep calls, same signatures as the header's.
struct CublasLt {
  decltype(&::cublasLtCreate) Create;
  decltype(&::cublasLtDestroy) Destroy;
  decltype(&::cublasLtGetVersion) GetVersion;
  decltype(&::cublasLtMatmul) Matmul;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic;
  decltype(&::cublasLtMatmulDescCreate) MatmulDescCreate;
  decltype(&::cublasLtMatmulDescDestroy) MatmulDescDestroy;
  decltype(&::cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute;
  decltype(&::cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate;
  decltype(&::cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute;
  decltype(&::cublasLtMatrixLayoutCreate) MatrixLayoutCreate;
  decltype(&::cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy;
};

// The loaded library (libcublasLt.so.<major of the headers built against>);
// throws BenchError naming the library and dlerror() when it cannot be opened.
const CublasLt& cublaslt();

#ifdef STEPSCOPE_HAVE_NCCL
struct Nccl {
  decltype(&::ncclAllGather) AllGather;
  decltype(&::ncclAllReduce) AllReduce;
  decltype(&::ncclBroadcast) Broadcast;
  decltype(&::ncclCommDestroy) CommDestroy;
  decltype(&::ncclCommInitAll) CommInitAll;
  decltype(&::ncclGetErrorString) GetErrorString;
  decltype(&::ncclGetVersion) GetVersion;
  decltype(&::ncclGroupEnd) GroupEnd;
  decltype(&::ncclGroupStart) GroupStart;
  decltype(&::ncclRecv) Recv;
  decltype(&::ncclReduceScatter) ReduceScatter;
  decltype(&::ncclSend) Send;
};

// libnccl.so.<NCCL_MAJOR>; throws BenchError when it cannot be opened.
const Nccl& nccl();
#endif

}  // namespace stepscope::hwbench::gpu
