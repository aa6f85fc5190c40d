// Types shared by the loss scaler's CPU reference and CUDA kernels (C++17,
// header-only: the torch extension compiles the kernels without libstepscope).
#pragma once

#include <cstdint>

namespace stepscope::kernels {

// Values are part of the device table's layout (GradTensorDesc::dtype).
enum class GradDType : int32_t { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2 };

}  // namespace stepscope::kernels
