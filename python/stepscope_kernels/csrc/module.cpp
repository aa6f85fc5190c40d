// stepscope_kernels._C: the CUDA kernels of src/kernels/gpu/ behind torch
// tensors. Python wrappers (autograd functions, modules, the loss scaler)
// live in the stepscope_kernels package beside this folder.
#include "registry.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "stepscope CUDA kernels: fused QKV + RoPE, activation compression, graph-safe loss scaling, block-sparse attention, fused image augmentation";
  register_qkv_rope(m);
  register_loss_scaler(m);
  register_activation_compression(m);
  register_block_sparse_attention(m);
  register_image_augment(m);
}
