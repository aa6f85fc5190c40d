// Time of one GEMM from its shape: a roofline (tensor-core rate vs HBM
// traffic) where the compute side loses to wave quantization of output tiles
// on the GPU's SMs and to small tiles. Constants in docs/planner.md.
#pragma once

#include "model/cluster_spec.h"

namespace stepscope::model {

// Bytes per GEMM input element: 2 (16-bit), 1 (FP8, MXFP8), 0.5 (NVFP4);
// block scales add 1/32 (MXFP8: one byte per 32) and 1/16 (NVFP4: one per 16).
inline double gemm_input_bytes(Dtype d) {
  switch (d) {
    case Dtype::kFp8:
      return 1;
    case Dtype::kMxfp8:
      return 1 + 1.0 / 32;
    case Dtype::kNvfp4:
      return 0.5 + 1.0 / 16;
    default:
      return 2;
  }
}

struct GemmShape {
  double m = 0, n = 0, k = 0;  // C[m×n] = A[m×k] · B[k×n]
  double batch = 1;            // independent GEMMs of this shape in one launch
};

// Fraction of the achievable tensor-core rate the best tile choice reaches
// (tile efficiency × wave efficiency), in (0, 1].
double gemm_shape_efficiency(const GemmShape& g, int sms);

// Seconds for the GEMM in `dtype` (element size 2 bytes, 1 for fp8).
double gemm_seconds(const GemmShape& g, const ClusterSpec& c, Dtype dtype);

// The achievable fraction of peak used for GEMMs: the catalog's, or the one a
// profile's samples imply (median of measured / (peak × shape efficiency)).
double gemm_fraction(const ClusterSpec& c, Dtype dtype);

}  // namespace stepscope::model
