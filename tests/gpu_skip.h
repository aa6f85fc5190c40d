// Tests that need a CUDA GPU start with SKIP_WITHOUT_GPU(): they skip, with a
// message, on machines without one (CI), and fail normally where one exists.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#define SKIP_WITHOUT_GPU()                                                                          \
  do {                                                                                              \
    int n = 0;                                                                                      \
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA GPU: skipped"; \
  } while (0)
