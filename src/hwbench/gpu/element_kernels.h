// Device-side helpers the benchmarks share: random fills of typed buffers
// and an independent (non-cuBLAS) reference for sampled GEMM outputs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace stepscope::hwbench::gpu {

enum class ElementType { kFp32, kBf16, kFp16, kFp8E4m3 };
size_t element_bytes(ElementType t);

// p[i] = uniform_value(seed, i) in type t (rounded to it), i < count.
void fill_uniform(void* p, ElementType t, size_t count, uint64_t seed, cudaStream_t stream);

// Raw random words over `bytes` (a multiple of 4), for bandwidth buffers.
void fill_random_words(void* p, size_t bytes, uint64_t seed, cudaStream_t stream);

// For each of `samples` output positions (rows[s], cols[s]) of D = op(A)·B in
// the bench's layout (A stored k×m and B k×n column-major, D m×n
// column-major), writes the double-precision dot product of the inputs to
// ref[s] and the value D holds to got[s]. rows, cols, ref, got are device arrays.
void gemm_reference_samples(const void* a, const void* b, ElementType in, const void* d, ElementType out, int64_t m,
                            int64_t k, const int64_t* rows, const int64_t* cols, int samples, double* ref,
                            double* got, double* abs_sum, cudaStream_t stream);

}  // namespace stepscope::hwbench::gpu
