// What the tensor-core (mma.sync) versions of block-sparse attention share:
// the MMA and ldmatrix instructions, cp.async staging of 16-bit row tiles,
// and the walk over a CSR row's live blocks in tiles of 64 rows.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"): lane l
// holds, of a 16×8 fp32 accumulator C, rows l/4 and l/4 + 8 at columns
// 2(l%4) + {0, 1} (c[0..1] the first row, c[2..3] the second); of the 16×16
// A operand, the same rows at columns 2(l%4) + {0, 1} and + 8 (a[0] row l/4,
// a[1] row l/4 + 8, a[2] and a[3] the same rows 8 columns on); of the 16×8 B
// operand, column l/4 at rows 2(l%4) + {0, 1} (b0) and + 8 (b1). So the
// accumulators of two adjacent 16×8 tiles are, packed to 16 bits, the A
// operand of the next MMA, and ldmatrix hands lane l row l/4, columns
// 2(l%4) + {0, 1} of each 8×8 matrix (the transpose with .trans).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/gpu/block_sparse_attention_rule.cuh"
#include "kernels/gpu/dtype_bits.cuh"
#include "kernels/gpu/wgmma.cuh"
#include "kernels/rule_interval.h"

namespace stepscope::kernels::gpu::bsa::mma {

constexpr int kWarps = 4;  // warps per block of threads
constexpr int kRows = 16;  // rows per warp (the MMA's M)
constexpr int kCtaRows = kWarps * kRows;
constexpr int kTile = 64;  // rows per staged tile (keys in the forward and dQ, queries in dK/dV)
constexpr int kPad = 8;    // 16 bytes of row padding: the 8 rows one ldmatrix reads land in distinct banks
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <class T>
struct Mma;
template <>
struct Mma<Bf16> {
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
  // c += a · b
  static __device__ __forceinline__ void run(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};
template <>
struct Mma<F16> {
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
  static __device__ __forceinline__ void run(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

// The A operand of keys/queries 16kk..16kk+15 from two adjacent accumulators
// (s[2kk], s[2kk + 1]) of 16×8.
template <class T>
__device__ __forceinline__ void pack_a(const float lo[4], const float hi[4], uint32_t a[4]) {
  a[0] = Mma<T>::pack(lo[0], lo[1]);
  a[1] = Mma<T>::pack(lo[2], lo[3]);
  a[2] = Mma<T>::pack(hi[0], hi[1]);
  a[3] = Mma<T>::pack(hi[2], hi[3]);
}

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}

// Operands from a tile of rows [row][LD] in shared memory (LD = D + kPad),
// for one lane:
// - as B, with the tile's rows as the MMA's N (S = Q·Kᵀ: keys are columns):
//   r[0..1] = B of rows 8j..8j+7 at columns 16kk..16kk+15, r[2..3] the next 16.
template <int LD>
__device__ __forceinline__ void load_b_rows(uint32_t r[4], const uint16_t* tile, int j, int kk, int lane) {
  ldmatrix_x4(r, tile + (j * 8 + lane % 8) * LD + kk * 16 + (lane / 8) * 8);
}
// - as B, with the tile's rows as the MMA's K (O = P·V: keys are the
//   reduction): r[0..1] = B of rows 16kk..16kk+15 at columns 8n..8n+7, r[2..3]
//   at columns 8(n+1)..
template <int LD>
__device__ __forceinline__ void load_b_cols(uint32_t r[4], const uint16_t* tile, int kk, int n, int lane) {
  ldmatrix_x4_trans(r, tile + (kk * 16 + (lane / 8 % 2) * 8 + lane % 8) * LD + (n + lane / 16) * 8);
}
// - as A, rows 16w..16w+15 at columns 16kk..16kk+15.
template <int LD>
__device__ __forceinline__ void load_a(uint32_t r[4], const uint16_t* tile, int w, int kk, int lane) {
  ldmatrix_x4(r, tile + (w * 16 + (lane / 8 % 2) * 8 + lane % 8) * LD + kk * 16 + (lane / 16) * 8);
}

// 2^x on the special-function unit (ex2.approx.ftz: relative error about
// 2^-22, results below 2^-126 flushed to 0, 2^-inf = 0): one instruction
// where exp2f adds a range test and two multiplies. Nsight Compute on v4
// (H100, 16k tokens, head dim 64) counted more FMUL than HMMA instructions
// in the forward, most of them exp2f's; v5 uses this.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
template <int V>
__device__ __forceinline__ float exp2_of(float x) {
  if constexpr (V >= 5)
    return fast_exp2(x);
  else
    return exp2f(x);
}

// 16 bytes global -> shared without passing through registers; bytes = 0
// writes zeros (rows past the end of a tile).
__device__ __forceinline__ void copy16_async(void* dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::); }
template <int Pending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

// One tile of a CSR row's walk: its first row (token) and how many rows it
// holds (0: past the end of the sequence), and whether its block is partial.
struct Tile {
  int64_t t0;
  int n;
  bool partial;
};
// Tile t of the walk over entries first.. of `csr`, blocks of `block` tokens
// cut into tiles of kTile, over a sequence of `limit` tokens.
__device__ __forceinline__ Tile tile_at(const DeviceCsr& csr, int32_t first, int t, int block, int64_t limit) {
  const int per_block = (block + kTile - 1) / kTile;
  const int32_t e = first + t / per_block;
  const int64_t begin = static_cast<int64_t>(csr.col_indices[e]) * block;
  const int64_t end = limit < begin + block ? limit : begin + block;
  const int64_t t0 = begin + static_cast<int64_t>(t % per_block) * kTile;
  const int64_t left = end - t0;
  return {t0, left <= 0 ? 0 : (left < kTile ? static_cast<int>(left) : kTile), csr.partial[e] != 0};
}
__device__ __forceinline__ int tiles_of(const DeviceCsr& csr, int64_t row, int block) {
  return (csr.row_offsets[row + 1] - csr.row_offsets[row]) * ((block + kTile - 1) / kTile);
}

// v5's walk over a CSR row's tiles, one step at a time: where v3 and v4 find
// tile t with tile_at (a division by the tiles per block, twice per tile: to
// stage it and to visit it), it keeps its place (entry, tile within the
// block) and moves on by one, an add and a compare. The entry's column and
// partial flag are read one entry ahead: the read is issued when the walk
// moves on and first used a tile later, so the staging that follows next()
// does not wait on a global-memory round trip (Nsight Compute on v8, H200:
// a third of the stalls were such waits, one per tile). Ahead = false reads
// the entry with each tile (the backward's walk, whose kernels are near their
// register limit and spill with the read ahead).
template <bool Ahead = true>
struct TileWalk {
  const DeviceCsr& csr;
  int block, per_block;
  int64_t limit;
  int32_t e, last;  // entry of the tile next() returns; the row's end
  int sub = 0;
  int32_t col = 0;  // entry e's column and partial flag, read ahead
  bool part = false;
  __device__ TileWalk(const DeviceCsr& c, int64_t row, int blk, int64_t lim)
      : csr(c), block(blk), per_block((blk + kTile - 1) / kTile), limit(lim), e(c.row_offsets[row]),
        last(Ahead ? c.row_offsets[row + 1] : 0) {
    if (Ahead) read_entry();
  }
  __device__ __forceinline__ void read_entry() {
    if (e < last) col = csr.col_indices[e], part = csr.partial[e] != 0;
  }
  __device__ __forceinline__ Tile next() {
    if constexpr (!Ahead) col = csr.col_indices[e], part = csr.partial[e] != 0;
    const int64_t begin = static_cast<int64_t>(col) * block;
    const int64_t end = limit < begin + block ? limit : begin + block;
    const int64_t t0 = begin + static_cast<int64_t>(sub) * kTile;
    const int64_t left = end - t0;
    const Tile tile{t0, left <= 0 ? 0 : (left < kTile ? static_cast<int>(left) : kTile), part};
    if (++sub == per_block) {
      sub = 0, ++e;
      if (Ahead) read_entry();
    }
    return tile;
  }
};

// Stages rows [t0, t0 + n) of two [.., D] tensors (from row `base`) into
// `a` and `b` ([kTile][D + kPad]), zeros from row n on; every thread of the
// block takes part.
// v5 (V >= 5): the tile's first row is found once and each chunk's offsets
// in 32 bits (chunk i of the tile is 8i elements on in global memory: rows
// are D = 8 · chunks long), for the 128 threads of a block.
template <int D, int V = 3>
__device__ __forceinline__ void stage_pair(const uint16_t* x, const uint16_t* y, int64_t base, int64_t t0, int n,
                                           uint16_t* a, uint16_t* b) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  if constexpr (V >= 5) {
    const uint16_t* xt = x + (base + t0) * D;
    const uint16_t* yt = y + (base + t0) * D;
    // Not unrolled: unrolled, the compiler keeps every chunk's addresses in
    // registers across the walk (spills at head dim 64, 234 registers at 128).
#pragma unroll 1
    for (int i = 0; i < kTile * kChunks / (kWarps * 32); ++i) {
      const int idx = threadIdx.x + i * kWarps * 32, r = idx / kChunks;
      const bool live = r < n;
      const int src = live ? idx * 8 : 0, dst = idx * 8 + r * kPad;
      copy16_async(a + dst, xt + src, live ? 16 : 0);
      copy16_async(b + dst, yt + src, live ? 16 : 0);
    }
  } else {
    for (int idx = threadIdx.x; idx < kTile * kChunks; idx += blockDim.x) {
      const int r = idx / kChunks, c = idx % kChunks;
      const bool live = r < n;
      const int64_t src = live ? (base + t0 + r) * D + c * 8 : base * D;
      copy16_async(a + r * (D + kPad) + c * 8, x + src, live ? 16 : 0);
      copy16_async(b + r * (D + kPad) + c * 8, y + src, live ? 16 : 0);
    }
  }
}

// v6 (wgmma): stages rows [t0, t0 + n) of x and y into `a` and `b` in the
// core-matrix layout of wgmma.cuh, zeros from row n on: chunk c (8
// elements) of row r goes to 16-byte slot (r / 8) · D + c · 8 + r % 8, so the
// eight rows of a core matrix are 128 contiguous bytes. Thread idx takes slot
// idx: eight consecutive threads fill one core matrix (no bank conflict) and
// read 16 bytes of each of eight rows. The same layout serves K (B of Q·Kᵀ,
// K-major: LBO 128 bytes, SBO 16 · D) and V (B of P·V, MN-major: LBO 16 · D,
// SBO 128).
// Threads: the block's (every one takes part).
template <int D, int Threads>
__device__ __forceinline__ void stage_pair_core(const uint16_t* x, const uint16_t* y, int64_t base, int64_t t0,
                                                int n, uint16_t* a, uint16_t* b) {
  const uint16_t* xt = x + (base + t0) * D;
  const uint16_t* yt = y + (base + t0) * D;
#pragma unroll 1
  for (int i = 0; i < kTile * D / 8 / Threads; ++i) {
    const int idx = threadIdx.x + i * Threads;
    const int r = (idx / D) * 8 + idx % 8, c = idx / 8 % (D / 8);
    const bool live = r < n;
    const int src = live ? r * D + c * 8 : 0;
    copy16_async(a + idx * 8, xt + src, live ? 16 : 0);
    copy16_async(b + idx * 8, yt + src, live ? 16 : 0);
  }
}

// v9: stage_pair_core with x (K) in wgmma's 128-byte swizzle instead
// (wg::descriptor_sw128): column block cb = c / 8 of 64 elements holds the
// tile's 64 rows of 128 bytes, and chunk c of row r goes to chunk
// (c % 8) ^ (r % 8) of row r there. Thread idx reads chunk idx % (D / 8) of
// row idx / (D / 8), so eight consecutive threads read 128 contiguous bytes
// of one row (Nsight Compute on v8: the core-matrix order read 16 bytes of
// each of eight rows per eight threads and fetched every sector twice) and
// write eight different chunks of one shared-memory row (no bank conflict).
// SwizzleY (v10): y (V) in the same layout, which is also the canonical
// MN-major 128-byte swizzle of P·V's B operand (keys are K, rows of 64 head
// dimensions are N: wg::descriptor_sw128_mn); otherwise y keeps the
// core-matrix layout.
template <int D, int Threads, bool SwizzleY = false>
__device__ __forceinline__ void stage_pair_swizzled(const uint16_t* x, const uint16_t* y, int64_t base, int64_t t0,
                                                    int n, uint16_t* a, uint16_t* b) {
  const uint16_t* xt = x + (base + t0) * D;
  const uint16_t* yt = y + (base + t0) * D;
#pragma unroll 1
  for (int i = 0; i < kTile * D / 8 / Threads; ++i) {
    const int idx = threadIdx.x + i * Threads;
    const int row = idx / (D / 8), chunk = idx % (D / 8);
    const bool live = row < n;
    const int to = (chunk / 8) * (kTile * 64) + row * 64 + ((chunk % 8) ^ (row % 8)) * 8;
    copy16_async(a + to, xt + (live ? row * D + chunk * 8 : 0), live ? 16 : 0);
    if constexpr (SwizzleY) {
      copy16_async(b + to, yt + (live ? row * D + chunk * 8 : 0), live ? 16 : 0);
    } else {
      const int vr = (idx / D) * 8 + idx % 8, vc = idx / 8 % (D / 8);
      const bool vlive = vr < n;
      copy16_async(b + idx * 8, yt + (vlive ? vr * D + vc * 8 : 0), vlive ? 16 : 0);
    }
  }
}

// Elements per staged row: v3-v5 pad each row by kPad for ldmatrix; v6's
// core matrices need none.
template <int D, int V>
constexpr int kStagedLd = V >= 6 ? D : D + kPad;
// Threads of a forward block: v7 has two warpgroups (128 query rows), the
// others four warps (64 rows).
template <int V>
constexpr int kThreads = V >= 7 ? 2 * kWarps * 32 : kWarps * 32;

// A lane's A-operand fragments of 16 rows of a [.., D] tensor straight from
// global memory (read once per kernel); rows not `ok` are zeros.
template <int D>
__device__ __forceinline__ void load_a_global(uint32_t f[D / 16][4], const uint16_t* x, const int64_t row[2],
                                              const bool ok[2], int lane) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int which = i & 1, col = kk * 16 + 2 * (lane % 4) + 8 * (i >> 1);
      f[kk][i] = ok[which] ? *reinterpret_cast<const uint32_t*>(x + row[which] * D + col) : 0u;
    }
}

// Walks the tiles of a CSR row over two [.., D] tensors x and y (K and V,
// or Q and dO) from row `base`, double-buffered through cp.async in
// `buffers` ([2][x, y][kTile][kStagedLd]; v6 in core-matrix order): tile t + 1 is copied while
// visit(xs, ys, tile) uses tile t. Every thread of the block must call it:
// it synchronises.
template <int D, int V, class Visit>
__device__ __forceinline__ void walk_tiles_async(const DeviceCsr& csr, int64_t row, int block, int64_t limit,
                                                 const uint16_t* x, const uint16_t* y, int64_t base,
                                                 uint16_t* buffers, Visit visit) {
  constexpr int LD = kStagedLd<D, V>;
  const int tiles = tiles_of(csr, row, block);
  if constexpr (V < 5) {
    const int32_t first = csr.row_offsets[row];
    auto stage = [&](int t) {
      uint16_t* to = buffers + (t & 1) * 2 * kTile * LD;
      const Tile tile = tile_at(csr, first, t, block, limit);
      stage_pair<D>(x, y, base, tile.t0, tile.n, to, to + kTile * LD);
    };
    if (tiles > 0) stage(0);
    commit_copies();
    for (int t = 0; t < tiles; ++t) {
      const uint16_t* xs = buffers + (t & 1) * 2 * kTile * LD;
      if (t + 1 < tiles) stage(t + 1);
      commit_copies();  // an empty group on the last tile keeps the count uniform
      wait_copies<1>();
      __syncthreads();
      visit(xs, xs + kTile * LD, tile_at(csr, first, t, block, limit));
      __syncthreads();  // every warp is done with this buffer before it is refilled
    }
  } else {  // v5: TileWalk, and the tile visited is the one staged a step before
    TileWalk<> walk(csr, row, block, limit);
    Tile staged{0, 0, false};
    auto stage = [&](int t) {
      uint16_t* to = buffers + (t & 1) * 2 * kTile * LD;
      staged = walk.next();
      if constexpr (V >= 6)
        stage_pair_core<D, kThreads<V>>(x, y, base, staged.t0, staged.n, to, to + kTile * LD);
      else
        stage_pair<D, V>(x, y, base, staged.t0, staged.n, to, to + kTile * LD);
    };
    if (tiles > 0) stage(0);
    commit_copies();
    for (int t = 0; t < tiles; ++t) {
      const uint16_t* xs = buffers + (t & 1) * 2 * kTile * LD;
      const Tile tile = staged;
      if (t + 1 < tiles) stage(t + 1);
      commit_copies();
      wait_copies<1>();
      if constexpr (V >= 6) wg::fence_shared_for_async();  // wgmma reads what cp.async wrote
      __syncthreads();
      visit(xs, xs + kTile * LD, tile);
      __syncthreads();
    }
  }
  wait_copies<0>();
}

// A lane's two rows of a warp's 16 (l/4 and l/4 + 8), as token indices.
struct LaneRows {
  int64_t token[2];
  bool ok[2];
};
__device__ __forceinline__ LaneRows lane_rows(int64_t first_token, int local0, int block, int64_t limit, bool live,
                                              int lane) {
  LaneRows r;
#pragma unroll
  for (int x = 0; x < 2; ++x) {
    r.token[x] = first_token + lane / 4 + 8 * x;
    r.ok[x] = live && local0 + lane / 4 + 8 * x < block && r.token[x] < limit;
  }
  return r;
}

// A tile every score of which the mask keeps, for every row of this lane:
// all 64 keys in the sequence, of a block the mask keeps whole, and the
// lane's rows in the sequence (v4's mask-free path; lanes of one quad agree).
__device__ __forceinline__ bool whole_tile(const Tile& tile, const LaneRows& r) {
  return !tile.partial && tile.n == kTile && r.ok[0] && r.ok[1];
}

// A dQ pass's per-row terms for the lane's two query rows: their flat
// index, Δ = dO · O over the row (this lane's quarter of it, then the
// quad's sum; written to `delta` for the dK/dV pass) and lse in log2 units
// (a row with no attended key, lse = -inf, is masked everywhere: 0 keeps
// its exponents finite).
template <class T, int D>
__device__ __forceinline__ void query_row_terms(const LaneRows& r, int64_t bh, const Dims& d, const uint16_t* out,
                                                const uint16_t* dout, const float* lse, int lane, int64_t at[2],
                                                float lse2[2], float dlt[2], float* delta) {
  const int col2 = 2 * (lane % 4);
#pragma unroll
  for (int x = 0; x < 2; ++x) {
    at[x] = bh * d.seq_q + r.token[x];
    float part = 0.0f;
    if (r.ok[x])
      for (int c = 0; c < D; c += 8)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          part += T::load(dout[at[x] * D + c + col2 + e]) * T::load(out[at[x] * D + c + col2 + e]);
    part += __shfl_xor_sync(0xffffffffu, part, 1);
    part += __shfl_xor_sync(0xffffffffu, part, 2);
    dlt[x] = part;
    if (r.ok[x] && lane % 4 == 0) delta[at[x]] = part;
    const float l = r.ok[x] ? lse[at[x]] : 0.0f;
    lse2[x] = l == -INFINITY ? 0.0f : l * kLog2e;
  }
}

// A pass's end where its rows are its own: the lane's rows of dQ, or (v16,
// without GQA) of dK or dV, fp32 accumulators scaled and stored in the
// dtype at rows at[0], at[1].
template <class T, int D>
__device__ __forceinline__ void store_grad_rows(const float acc[D / 8][4], const LaneRows& r, const int64_t at[2],
                                                 float scale, int lane, uint16_t* dq) {
#pragma unroll
  for (int x = 0; x < 2; ++x) {
    if (!r.ok[x]) continue;
    uint16_t* dst = dq + at[x] * D + 2 * (lane % 4);
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      *reinterpret_cast<uint32_t*>(dst + n * 8) = Mma<T>::pack(acc[n][2 * x] * scale, acc[n][2 * x + 1] * scale);
  }
}

// A key row's dK and dV accumulators (fp32, N/8 mma.sync accumulators of
// 16 × 8 side by side), zeroed, and after the walk added into the K/V
// head's fp32 workspace rows (dK scaled): query heads of one K/V head
// (GQA) add into the same rows, hence the atomics.
template <int D>
__device__ __forceinline__ void zero_rows(float dk[D / 8][4], float dv[D / 8][4]) {
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int x = 0; x < 4; ++x) dk[n][x] = dv[n][x] = 0.0f;
}
template <int D>
__device__ __forceinline__ void add_key_rows(const float dk[D / 8][4], const float dv[D / 8][4], const LaneRows& r,
                                             int64_t kv_base, float scale, int lane, float* dk_acc, float* dv_acc) {
#pragma unroll
  for (int x = 0; x < 2; ++x) {
    if (!r.ok[x]) continue;
    const int64_t at = (kv_base + r.token[x]) * D + 2 * (lane % 4);
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        atomicAdd(dk_acc + at + n * 8 + e, dk[n][2 * x + e] * scale);
        atomicAdd(dv_acc + at + n * 8 + e, dv[n][2 * x + e]);
      }
  }
}

// Which of the lane's 32 elements of a 64 × 64 product the mask keeps, as
// bit 4j + x for accumulator s[j][x] (row r.token[x / 2], column tile.t0 +
// 8j + 2(lane % 4) + x % 2). RowsAreKeys: the rows are keys and the columns
// queries (the dK/dV pass). A whole tile keeps all; otherwise one rolled
// loop holds the only copy of the rule, so the unrolled exponent loops
// that test the bits stay small (Nsight Compute on v12's dK/dV pass, the
// rule inlined in each of 32 elements: 1.9 stall cycles per instruction
// waiting for instructions to be fetched; v13 uses it).
//
// Interval (v14): where the rule has no documents and no global tokens,
// what it keeps of a row is one interval of the other side
// (kernels/rule_interval.h), so each row's interval is found once in tile
// columns and the 32 bits are two compares each, unrolled; elsewhere the
// rolled loop. From v17 documents packed whole too (d.doc_spans: the
// interval cut to the row's document).
template <bool RowsAreKeys, bool Interval = false>
__device__ __forceinline__ uint32_t keep_bits(const Dims& d, const Tile& tile, const LaneRows& r, int lane) {
  if (whole_tile(tile, r)) return 0xffffffffu;
  if (Interval && (!d.doc_ids || d.doc_spans) && d.global_tokens == 0) {
    // Per row, the kept columns [lo, hi] of this tile (lo > hi: none).
    int lo[2], hi[2];
#pragma unroll
    for (int x = 0; x < 2; ++x) {
      TokenInterval met = rule_interval(r.token[x], RowsAreKeys, d.causal, d.window);
      if (d.doc_spans && r.ok[x]) {  // within the row's document (v17)
        const int2 run = *reinterpret_cast<const int2*>(d.doc_spans + 2 * r.token[x]);
        met.first = met.first > run.x ? met.first : run.x;
        met.last = met.last < run.y ? met.last : run.y;
      }
      // In tile columns, clipped to the tile's rows; a whole block of the
      // tile meets all of them.
      const int64_t first = tile.partial && met.first > tile.t0 ? met.first - tile.t0 : 0;
      const int64_t last = tile.partial && met.last < tile.t0 + tile.n - 1 ? met.last - tile.t0 : tile.n - 1;
      lo[x] = r.ok[x] && first < kTile ? static_cast<int>(first) : kTile;
      hi[x] = last < 0 ? -1 : static_cast<int>(last);
    }
    uint32_t bits = 0;
    const int col2 = 2 * (lane % 4);
#pragma unroll
    for (int e = 0; e < 32; ++e) {
      const int x = (e >> 1) & 1, c = (e >> 2) * 8 + col2 + (e & 1);
      bits |= static_cast<uint32_t>(c >= lo[x] && c <= hi[x]) << e;
    }
    return bits;
  }
  uint32_t bits = 0;
#pragma unroll 1
  for (int e = 0; e < 32; ++e) {
    const int second = (e >> 1) & 1, c = (e >> 2) * 8 + 2 * (lane % 4) + (e & 1);
    const int64_t row = second ? r.token[1] : r.token[0], col = tile.t0 + c;
    const bool ok = second ? r.ok[1] : r.ok[0];
    const bool keep =
        ok && c < tile.n && (!tile.partial || (RowsAreKeys ? allows(d, col, row) : allows(d, row, col)));
    bits |= static_cast<uint32_t>(keep) << e;
  }
  return bits;
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace stepscope::kernels::gpu::bsa::mma
