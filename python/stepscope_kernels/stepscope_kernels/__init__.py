"""stepscope_kernels: the remedies of stepscope's diagnoses, as PyTorch kernels (issue #6).

* qkv_rope: FusedQKVRoPE, one GEMM + one split/RoPE kernel for attention inputs.
* activation_compression: 4/8-bit block-wise compression of saved activations.
* loss_scaler: GraphSafeGradScaler, torch.amp.GradScaler without host syncs.
* block_sparse_attention: BlockSparseMask (CSR block masks) and BlockSparseAttention (issue #29).
* image_augment: GpuAugment, nvJPEG decode + one fused crop/flip/jitter/normalize kernel (issue #31).

The CUDA kernels live in stepscope_kernels._C (build: see docs/kernels.md);
without it the pure-torch reference paths still import and run.
"""

from .activation_compression import (  # noqa: F401
    CompressedGELU,
    CompressedLayerNorm,
    CompressedLinear,
    CompressionConfig,
    QuantizedTensor,
    compress_activations,
    dequantize,
    quantize,
)
from .block_sparse_attention import (  # noqa: F401
    BlockSparseAttention,
    BlockSparseMask,
    block_sparse_attention,
    block_sparse_attention_reference,
)
from .image_augment import GpuAugment, JpegError  # noqa: F401
from .loss_scaler import GraphSafeGradScaler  # noqa: F401
from .qkv_rope import FusedQKVRoPE, qkv_rope, qkv_rope_reference, rope_tables  # noqa: F401

try:
    from . import _C  # noqa: F401
    HAVE_KERNELS = True
except ImportError:  # the extension is not built: reference paths only
    HAVE_KERNELS = False

__all__ = [
    "CompressedGELU", "CompressedLayerNorm", "CompressedLinear", "CompressionConfig", "QuantizedTensor",
    "compress_activations", "dequantize", "quantize",
    "GraphSafeGradScaler",
    "GpuAugment", "JpegError",
    "BlockSparseAttention", "BlockSparseMask", "block_sparse_attention", "block_sparse_attention_reference",
    "FusedQKVRoPE", "qkv_rope", "qkv_rope_reference", "rope_tables",
    "HAVE_KERNELS",
]
