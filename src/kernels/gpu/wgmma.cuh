// Hopper's warpgroup matrix instructions (wgmma, PTX ISA 9.7.15; sm_90a)
// for the block-sparse attention forward v6: a warpgroup of 4 warps issues
// one asynchronous m64nNk16 product, each warp holding 16 of the 64 rows.
//
// Register layouts (PTX ISA, "Register Fragments and Shared Memory Matrix
// Layouts" of wgmma .m64nNk16): warp w of the warpgroup holds rows
// 16w..16w+15 of A and of the accumulator D, and within its 16 rows the
// lane layout is mma.sync m16n8k16's (block_sparse_attention_mma.cuh): A
// as mma.sync's A fragment, D as N/8 of mma.sync's 16×8 accumulators side
// by side. So the v5 kernel's Q fragments, scores and output rows keep their
// registers and their softmax code; only the products change.
//
// Shared-memory operands (B here) are read through a 64-bit descriptor. The
// layout used is the canonical one without swizzling ("interleaved"): the
// matrix is cut into core matrices of 8 rows × 16 bytes, each stored as 128
// contiguous bytes; LBO is the byte step between core matrices adjacent in
// the K dimension, SBO between core matrices adjacent in M/N (PTX ISA,
// "Canonical Layouts": K-major ((8,m),(T,2k)):((1T,SBO),(1,LBO)), MN-major
// ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)), T = 8 16-bit elements).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gpu/dtype_bits.cuh"

namespace stepscope::kernels::gpu::bsa::wg {

// wgmma and the async-proxy fence exist only in the arch-specific sm_90a
// target (CMake: CUDA_ARCHITECTURES 90a; setup.py: compute_90a): elsewhere
// these compile to a trap. The launcher checks the device (compute
// capability 9.0), not the build, so a build for other targets traps on an
// explicit request for v6 or v7; the default (v5) never reaches them.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define STEPSCOPE_HAVE_WGMMA 1
#else
#define STEPSCOPE_HAVE_WGMMA 0
#endif

// Whether the current device runs these instructions (compute capability
// 9.0 exactly: sm_90a code runs nowhere else). Launchers check this, not
// the build.
inline bool device_runs_wgmma() {
  int device = 0, major = 0, minor = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
         cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess && major == 9 &&
         minor == 0;
}

// Descriptor of a shared-memory matrix without swizzling (bits 0-13: start
// address >> 4; 16-29: LBO >> 4; 32-45: SBO >> 4; 62-63: swizzle mode 0).
__device__ __forceinline__ uint64_t descriptor(const void* smem, uint32_t lbo_bytes, uint32_t sbo_bytes) {
  const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) | (static_cast<uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32);
}

// Descriptor of a K-major operand in the 128-byte swizzle (mode 1, bits
// 62-63): rows of 64 bf16/f16 (128 bytes) in atoms of 8 rows × 128 bytes,
// 1,024-byte aligned, the 16-byte chunk c of row r stored at chunk c ^ (r %
// 8) of its row. SBO is the step from one 8-row atom to the next (1,024
// bytes where atoms are stacked along N); LBO is not used by this mode.
// A K step inside the 128 bytes moves the start address by its bytes (the
// hardware applies the swizzle to the address it forms).
__device__ __forceinline__ uint64_t descriptor_sw128(const void* smem, uint32_t sbo_bytes) {
  return descriptor(smem, 16, sbo_bytes) | (1ull << 62);
}

// Descriptor of an MN-major operand (P·V's V: N, the head dimension, is
// contiguous) in the 128-byte swizzle: the same atoms of 8 rows × 128 bytes
// with the same XOR of chunks, a row now holding 64 N-elements of one K
// index. PTX ISA's canonical MN-major layout for this mode is
// ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)) in 16-byte units: LBO is the step
// from one 64-element block of N to the next, SBO from one group of 8 K
// rows to the next (the roles are the reverse of the unswizzled layout's).
__device__ __forceinline__ uint64_t descriptor_sw128_mn(const void* smem, uint32_t lbo_bytes, uint32_t sbo_bytes) {
  return descriptor(smem, lbo_bytes, sbo_bytes) | (1ull << 62);
}

// Before the first wgmma of a batch: orders the registers it reads (A, and
// the accumulators when they were changed by other instructions) after the
// instructions that wrote them.
__device__ __forceinline__ void fence() {
#if STEPSCOPE_HAVE_WGMMA
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void commit() {
#if STEPSCOPE_HAVE_WGMMA
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
// Waits until at most Pending committed groups are still running.
template <int Pending>
__device__ __forceinline__ void wait() {
#if STEPSCOPE_HAVE_WGMMA
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
#endif
}
// Shared memory written by ordinary stores or cp.async (the generic proxy)
// and read next by wgmma (the async proxy): each writing thread fences
// before the barrier that publishes the writes.
__device__ __forceinline__ void fence_shared_for_async() {
#if STEPSCOPE_HAVE_WGMMA
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
// The accumulators are written by the wgmma asynchronously: after wait(),
// this tells the compiler they changed there, so no read of them moves
// above the wait.
template <int J>
__device__ __forceinline__ void hold(float (&d)[J][4]) {
#pragma unroll
  for (int j = 0; j < J; ++j)
#pragma unroll
    for (int x = 0; x < 4; ++x) asm volatile("" : "+f"(d[j][x])::"memory");
}

// The operand lists of the m64n64 (32 accumulators per thread) and m64n128
// (64) products, written out: inline PTX names each register.
#define STEPSCOPE_WG_ACC32 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21," \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \

#define STEPSCOPE_WG_OUT32(d) \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), \
  "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), \
  "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), \
  "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), \
  "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])

#define STEPSCOPE_WG_ACC64 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21," \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41," \
  "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61," \
  "%62, %63" \

#define STEPSCOPE_WG_OUT64(d) \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), \
  "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), \
  "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), \
  "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), \
  "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), \
  "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), \
  "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), \
  "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), \
  "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), \
  "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])

// d (m64 × N, fp32) = a · B (+ d when accumulate), a in registers (each
// warp its 16 rows × 16 of K), B (K 16 × N) in shared memory by its
// descriptor; TransB 0: B K-major (rows of N contiguous in K), 1: MN-major.
template <class T, int N, int TransB>
struct MmaRS;

#if STEPSCOPE_HAVE_WGMMA
#define STEPSCOPE_WG_ASM(...) asm volatile(__VA_ARGS__)
#else
#define STEPSCOPE_WG_ASM(...) __trap()
#endif

// The operands after the accumulators: a (4), b, accumulate, TransB.
#define STEPSCOPE_WG_MMA_RS(TYPE, PTX, N, ACC, OUT, SETP, TAIL)                                                 \
  template <int TransB>                                                                                   \
  struct MmaRS<TYPE, N, TransB> {                                                                         \
    static __device__ __forceinline__ void run(float (&d)[N / 8][4], const uint32_t a[4], uint64_t b,    \
                                               int accumulate) {                                          \
      STEPSCOPE_WG_ASM("{\n.reg .pred p;\n" SETP                                                           \
                       "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " {" ACC "}, " TAIL \
                       : OUT(d)                                                                           \
                       : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate), "n"(TransB)); \
    }                                                                                                     \
  };
#define STEPSCOPE_WG_SETP32 "setp.ne.b32 p, %37, 0;\n"
#define STEPSCOPE_WG_SETP64 "setp.ne.b32 p, %69, 0;\n"
#define STEPSCOPE_WG_TAIL32 "{%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
#define STEPSCOPE_WG_TAIL64 "{%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
STEPSCOPE_WG_MMA_RS(Bf16, "bf16", 64, STEPSCOPE_WG_ACC32, STEPSCOPE_WG_OUT32, STEPSCOPE_WG_SETP32, STEPSCOPE_WG_TAIL32)
STEPSCOPE_WG_MMA_RS(F16, "f16", 64, STEPSCOPE_WG_ACC32, STEPSCOPE_WG_OUT32, STEPSCOPE_WG_SETP32, STEPSCOPE_WG_TAIL32)
STEPSCOPE_WG_MMA_RS(Bf16, "bf16", 128, STEPSCOPE_WG_ACC64, STEPSCOPE_WG_OUT64, STEPSCOPE_WG_SETP64, STEPSCOPE_WG_TAIL64)
STEPSCOPE_WG_MMA_RS(F16, "f16", 128, STEPSCOPE_WG_ACC64, STEPSCOPE_WG_OUT64, STEPSCOPE_WG_SETP64, STEPSCOPE_WG_TAIL64)
#undef STEPSCOPE_WG_MMA_RS

// d (m64 × N, fp32) = A · B (+ d when accumulate), both in shared memory by
// their descriptors and K-major (A's rows of M and B's rows of N
// contiguous in K): the backward's Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ, whose A (K,
// V) stays in shared memory for the whole walk.
template <class T, int N>
struct MmaSS;
#define STEPSCOPE_WG_MMA_SS(TYPE, PTX)                                                                         \
  template <>                                                                                           \
  struct MmaSS<TYPE, 64> {                                                                              \
    static __device__ __forceinline__ void run(float (&d)[8][4], uint64_t a, uint64_t b, int accumulate) { \
      STEPSCOPE_WG_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                     \
                       "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX "." PTX " {" STEPSCOPE_WG_ACC32 \
                       "}, %32, %33, p, 1, 1, 0, 0;\n}\n"                                                \
                       : STEPSCOPE_WG_OUT32(d)                                                          \
                       : "l"(a), "l"(b), "r"(accumulate));                                              \
    }                                                                                                   \
  };
STEPSCOPE_WG_MMA_SS(Bf16, "bf16")
STEPSCOPE_WG_MMA_SS(F16, "f16")
#undef STEPSCOPE_WG_MMA_SS

}  // namespace stepscope::kernels::gpu::bsa::wg
