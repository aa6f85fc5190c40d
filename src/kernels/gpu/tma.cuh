// Hopper's tensor memory accelerator (TMA) and the shared-memory barriers
// (mbarrier) its copies complete on (PTX ISA 9.7.9.25 cp.async.bulk.tensor,
// 9.7.13.15 mbarrier; sm_90). One thread issues a copy of a box named by a
// tensor map (tensor_map.h); the barrier counts the bytes that landed, and
// the threads that read the box wait on the barrier's phase. TMA writes
// through the async proxy, the proxy wgmma reads through, so no proxy fence
// stands between a TMA copy and a wgmma that reads it.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace stepscope::kernels::gpu::tma {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define STEPSCOPE_HAVE_TMA 1
#else
#define STEPSCOPE_HAVE_TMA 0
#endif

__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// A barrier that completes a phase once `arrivals` threads arrived and
// every byte announced by expect_bytes landed. Then fence_init() and a
// block barrier before any thread or copy uses it.
__device__ __forceinline__ void init(uint64_t* bar, uint32_t arrivals) {
#if STEPSCOPE_HAVE_TMA
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(arrivals) : "memory");
#endif
}
// Makes barrier initialisations visible to the async proxy (the copies).
__device__ __forceinline__ void fence_init() {
#if STEPSCOPE_HAVE_TMA
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
// This thread's arrival, announcing `bytes` more to land in this phase.
__device__ __forceinline__ void arrive_expect_bytes(uint64_t* bar, uint32_t bytes) {
#if STEPSCOPE_HAVE_TMA
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
#endif
}
// This thread's arrival alone (a consumer releasing a buffer).
__device__ __forceinline__ void arrive(uint64_t* bar) {
#if STEPSCOPE_HAVE_TMA
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
#endif
}
// Waits until the phase of parity `phase` (0, 1, 0, ...) has completed.
__device__ __forceinline__ void wait(uint64_t* bar, uint32_t phase) {
#if STEPSCOPE_HAVE_TMA
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(smem_address(bar)),
      "r"(phase)
      : "memory");
#endif
}
// 4 bytes global -> shared by cp.async, without passing through registers
// (bytes = 0 writes zeros and reads nothing).
__device__ __forceinline__ void copy4_async(void* dst, const void* src, uint32_t bytes) {
#if STEPSCOPE_HAVE_TMA
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_address(dst)), "l"(src), "r"(bytes)
               : "memory");
#endif
}
// This thread's arrival on `bar`, made once every cp.async it issued before
// has landed (.noinc: the arrival is one of those the barrier was
// initialised to expect), so the thread need not wait for its copies.
__device__ __forceinline__ void arrive_when_copied(uint64_t* bar) {
#if STEPSCOPE_HAVE_TMA
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_address(bar)) : "memory");
#endif
}
// Copies the box at (column x, row y, plane z) of `map` (elements) into
// `dst` (shared memory, 1,024-byte aligned for the 128-byte swizzle); its
// bytes count towards `bar`'s current phase.
__device__ __forceinline__ void load_3d(void* dst, const CUtensorMap* map, int32_t x, int32_t y, int32_t z,
                                        uint64_t* bar) {
#if STEPSCOPE_HAVE_TMA
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(smem_address(bar))
      : "memory");
#endif
}

}  // namespace stepscope::kernels::gpu::tma
