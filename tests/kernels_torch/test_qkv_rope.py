"""Fused QKV + RoPE through PyTorch (issue #6 item 1), on fresh random inputs
(the seed is printed on failure).

Error bounds, kernel vs the pure-torch reference (both compute in fp32 and
round once to the dtype; the kernel uses fma, torch separate products, so the
fp32 values differ by a few fp32 ulps and the rounded ones by at most one ulp
of the dtype):
  * fp32: |out - ref| <= 1e-5 + 1e-5 |ref|;
  * bf16 and fp16: |out - ref| <= 1e-5 + 1e-2 |ref| (one bf16 ulp is <= 2^-7 ~ 7.8e-3 relative).
Gradients: the kernel's backward against torch autograd through the reference
with the same bounds. Module: equal to three nn.Linear + rotate-half RoPE +
transpose (fp32: 1e-4 relative, for different GEMM shapes; bf16: 2e-2).
Outputs are allocated over freed NaN-filled blocks, so an element the kernel
does not write shows up as NaN. Skips without torch, without the extension
or without a CUDA GPU (reference-only tests need just torch).
"""

import math
import os
import unittest

try:
    import torch
    import torch.nn as nn
except ImportError:  # CI has no torch
    torch = None

qr = None
if torch is not None:
    try:
        import importlib
        # the package exports a function named like the module: fetch the module itself
        qr = importlib.import_module("stepscope_kernels.qkv_rope")
    except ImportError:
        qr = None

HAS_CUDA = torch is not None and torch.cuda.is_available()
HAS_KERNELS = qr is not None and qr._C is not None and HAS_CUDA
TOL = {} if torch is None else {torch.float32: (1e-5, 1e-5), torch.bfloat16: (1e-2, 1e-5),
                                torch.float16: (1e-2, 1e-5)}


def fresh_seed():
    return int.from_bytes(os.urandom(4), "little")


def hf_rope(x, cos, sin):
    """rotate-half RoPE as workloads/train_gpt.py writes it; x [B, H, S, D], cos/sin [S, D/2]."""
    c = torch.cat((cos, cos), dim=-1)
    s = torch.cat((sin, sin), dim=-1)
    x1, x2 = x.chunk(2, dim=-1)
    return x * c + torch.cat((-x2, x1), dim=-1) * s


def poison_allocator(shapes, dtype, device):
    """Leave NaN-filled freed blocks of these sizes in the caching allocator."""
    blocks = [torch.full(s, float("nan"), dtype=dtype, device=device) for s in shapes]
    del blocks


@unittest.skipIf(qr is None, "torch or stepscope_kernels not importable")
class ReferenceTest(unittest.TestCase):
    def test_rotates_each_pair_by_the_position_angle(self):
        cos, sin = qr.rope_tables(8, 2, 10000.0, "cpu")
        qkv = torch.zeros(1, 8, 6)
        qkv[0, :, 0] = 1.0  # q = (1, 0) -> (cos s, sin s)
        qkv[0, :, 4] = 3.0  # v copied
        q, k, v = qr.qkv_rope_reference(qkv, cos, sin, 1, 1, 2)
        s = torch.arange(8, dtype=torch.float64)
        torch.testing.assert_close(q[0, 0, :, 0].double(), s.cos(), rtol=0, atol=1e-6)
        torch.testing.assert_close(q[0, 0, :, 1].double(), s.sin(), rtol=0, atol=1e-6)
        self.assertTrue(torch.equal(k, torch.zeros_like(k)))
        self.assertTrue(torch.equal(v[0, 0, :, 0], torch.full((8,), 3.0)))

    def test_tables_are_cached_per_key(self):
        a = qr.rope_tables(16, 8, 10000.0, "cpu")
        self.assertIs(a, qr.rope_tables(16, 8, 10000.0, "cpu"))
        self.assertIsNot(a, qr.rope_tables(16, 8, 500000.0, "cpu"))
        self.assertEqual(a[0].dtype, torch.float32)
        self.assertEqual(tuple(a[0].shape), (16, 4))

    def test_reference_gradcheck_float64(self):
        seed = fresh_seed()
        g = torch.Generator().manual_seed(seed)
        cos, sin = qr.rope_tables(5, 4, 10000.0, "cpu")
        qkv = torch.randn(2, 5, (2 + 2) * 4, dtype=torch.float64, generator=g, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(
            lambda t: qr.qkv_rope_reference(t, cos.double(), sin.double(), 2, 1, 4), (qkv,)), f"seed {seed}")

    def test_init_draws_like_three_linears(self):
        torch.manual_seed(1234)
        m = qr.FusedQKVRoPE(48, 4, n_kv_heads=2, bias=True)
        torch.manual_seed(1234)
        lin = [nn.Linear(48, 48), nn.Linear(48, 24), nn.Linear(48, 24)]
        self.assertTrue(torch.equal(m.weight, torch.cat([l.weight for l in lin])))
        self.assertTrue(torch.equal(m.bias, torch.cat([l.bias for l in lin])))

    def test_module_on_cpu_equals_three_linears_and_rope(self):
        seed = fresh_seed()
        torch.manual_seed(seed)
        d, h, hkv, hd, S = 64, 4, 2, 16, 9
        lq, lk, lv = nn.Linear(d, h * hd), nn.Linear(d, hkv * hd), nn.Linear(d, hkv * hd)
        m = qr.FusedQKVRoPE.from_linears(lq, lk, lv, h, hkv, max_seq_len=32)
        x = torch.randn(3, S, d)
        q, k, v = m(x)
        cos, sin = qr.rope_tables(32, hd, 10000.0, "cpu")
        rq = hf_rope(lq(x).view(3, S, h, hd).transpose(1, 2), cos[:S], sin[:S])
        rk = hf_rope(lk(x).view(3, S, hkv, hd).transpose(1, 2), cos[:S], sin[:S])
        rv = lv(x).view(3, S, hkv, hd).transpose(1, 2)
        for got, want in ((q, rq), (k, rk), (v, rv)):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5, msg=lambda s: f"seed {seed}: {s}")

    def test_bad_arguments_are_named(self):
        cos, sin = qr.rope_tables(4, 8, 10000.0, "cpu")
        with self.assertRaisesRegex(ValueError, "kv_heads"):
            qr.qkv_rope_reference(torch.zeros(1, 4, 5 * 8), cos, sin, 3, 2, 8)
        with self.assertRaisesRegex(ValueError, "last dimension"):
            qr.qkv_rope_reference(torch.zeros(1, 4, 33), cos, sin, 2, 1, 8)
        with self.assertRaisesRegex(ValueError, "table length"):
            qr.qkv_rope_reference(torch.zeros(1, 5, 32), cos, sin, 2, 1, 8)
        with self.assertRaisesRegex(ValueError, "head_dim"):
            qr.FusedQKVRoPE(64, 4, head_dim=7)
        with self.assertRaisesRegex(ValueError, "head_dim"):
            qr.FusedQKVRoPE(2048, 4)  # head_dim 512 > 256
        with self.assertRaisesRegex(ValueError, "n_kv_heads"):
            qr.FusedQKVRoPE(64, 4, n_kv_heads=3)
        m = qr.FusedQKVRoPE(64, 4, max_seq_len=8)
        with self.assertRaisesRegex(ValueError, "max_seq_len"):
            m(torch.zeros(1, 9, 64))
        with self.assertRaisesRegex(ValueError, "shape"):
            m(torch.zeros(9, 64))


SHAPES = [  # (B, S, H, Hkv, D)
    (1, 1, 1, 1, 2),
    (3, 17, 4, 2, 64),     # GQA, odd batch and seq
    (2, 33, 6, 3, 6),      # head_dim / 2 = 3: the scalar path
    (1, 5, 8, 1, 256),     # largest head_dim, MQA
    (5, 129, 32, 8, 128),  # Llama-like GQA
]


@unittest.skipUnless(HAS_KERNELS, "needs the built extension and a CUDA GPU")
class KernelTest(unittest.TestCase):
    def setUp(self):
        self.seed = fresh_seed()
        torch.manual_seed(self.seed)

    def _check(self, got, want, dtype, what):
        rtol, atol = TOL[dtype]
        self.assertFalse(got.isnan().any().item(), f"seed {self.seed}: {what} has NaN (unwritten element?)")
        torch.testing.assert_close(got.float(), want.float(), rtol=rtol, atol=atol,
                                   msg=lambda s: f"seed {self.seed}: {what}: {s}")

    def test_forward_and_backward_match_reference(self):
        for dtype in (torch.float32, torch.bfloat16, torch.float16):
            for (B, S, H, Hkv, D) in SHAPES:
                with self.subTest(dtype=dtype, shape=(B, S, H, Hkv, D)):
                    cos, sin = qr.rope_tables(S + 3, D, 10000.0, "cuda")
                    x = torch.randn(B, S, (H + 2 * Hkv) * D, device="cuda").to(dtype)
                    xr = x.detach().clone().requires_grad_(True)
                    xk = x.detach().clone().requires_grad_(True)
                    poison_allocator([(B, H, S, D), (B, Hkv, S, D), (B, Hkv, S, D)], dtype, "cuda")
                    q, k, v = qr.qkv_rope(xk, cos, sin, H, Hkv, D)
                    rq, rk, rv = qr.qkv_rope_reference(xr, cos, sin, H, Hkv, D)
                    self.assertEqual(q.shape, (B, H, S, D))
                    self.assertEqual(k.shape, (B, Hkv, S, D))
                    self.assertTrue(q.is_contiguous() and k.is_contiguous() and v.is_contiguous())
                    self._check(q, rq, dtype, "q")
                    self._check(k, rk, dtype, "k")
                    self.assertTrue(torch.equal(v, rv), f"seed {self.seed}: v must be an exact copy")
                    gq, gk, gv = torch.randn_like(q), torch.randn_like(k), torch.randn_like(v)
                    poison_allocator([x.shape], dtype, "cuda")
                    torch.autograd.backward((q, k, v), (gq, gk, gv))
                    torch.autograd.backward((rq, rk, rv), (gq, gk, gv))
                    self._check(xk.grad, xr.grad, dtype, "grad_qkv")

    def test_non_contiguous_input_and_unused_outputs(self):
        B, S, H, Hkv, D = 2, 10, 4, 2, 32
        cos, sin = qr.rope_tables(16, D, 10000.0, "cuda")
        big = torch.randn(B, S, 2 * (H + 2 * Hkv) * D, device="cuda", requires_grad=True)
        x = big[..., ::2]  # a strided view
        q, k, v = qr.qkv_rope(x, cos, sin, H, Hkv, D)
        rq, rk, rv = qr.qkv_rope_reference(x.detach(), cos, sin, H, Hkv, D)
        self._check(q, rq, torch.float32, "q")
        q.sum().backward()  # k and v unused: their gradients are zeros
        ref = big.detach().clone().requires_grad_(True)
        qr.qkv_rope_reference(ref[..., ::2], cos, sin, H, Hkv, D)[0].sum().backward()
        self._check(big.grad, ref.grad, torch.float32, "grad")

    def test_extension_rejects_bad_inputs_by_name(self):
        C = qr._C
        cos, sin = qr.rope_tables(8, 16, 10000.0, "cuda")
        good = torch.zeros(2, 8, 4 * 16, device="cuda", dtype=torch.bfloat16)
        cases = [
            ("must be float32, float16 or bfloat16", lambda: C.qkv_rope_forward(good.double(), cos, sin, 2, 1, 16)),
            ("must be a CUDA tensor", lambda: C.qkv_rope_forward(good.cpu(), cos, sin, 2, 1, 16)),
            ("contiguous", lambda: C.qkv_rope_forward(good.transpose(0, 1), cos, sin, 2, 1, 16)),
            ("last dimension", lambda: C.qkv_rope_forward(good, cos, sin, 3, 1, 16)),
            ("kv_heads", lambda: C.qkv_rope_forward(torch.zeros(2, 8, 5 * 16, device="cuda"), cos, sin, 3, 2, 16)),
            ("head_dim", lambda: C.qkv_rope_forward(torch.zeros(1, 1, 4 * 258, device="cuda"), cos, sin, 2, 1, 258)),
            ("table length", lambda: C.qkv_rope_forward(torch.zeros(2, 9, 64, device="cuda"), cos, sin, 2, 1, 16)),
            ("cos must be float32", lambda: C.qkv_rope_forward(good, cos.half(), sin, 2, 1, 16)),
            ("sin must have shape", lambda: C.qkv_rope_forward(good, cos, sin[:, :4].contiguous(), 2, 1, 16)),
            ("one dtype", lambda: C.qkv_rope_backward(torch.zeros(1, 2, 8, 16, device="cuda"),
                                                      torch.zeros(1, 1, 8, 16, device="cuda").half(),
                                                      torch.zeros(1, 1, 8, 16, device="cuda"), cos, sin)),
        ]
        for pattern, call in cases:
            with self.subTest(pattern=pattern):
                with self.assertRaisesRegex(RuntimeError, pattern):
                    call()

    def test_module_equals_three_linears_forward_and_backward(self):
        for dtype, rtol in ((torch.float32, 1e-4), (torch.bfloat16, 2e-2)):
            with self.subTest(dtype=dtype):
                torch.manual_seed(self.seed)
                d, h, hkv, S, B = 256, 8, 2, 37, 3
                hd = d // h
                lin = [nn.Linear(d, n * hd, device="cuda", dtype=dtype) for n in (h, hkv, hkv)]
                m = qr.FusedQKVRoPE.from_linears(*lin, n_heads=h, n_kv_heads=hkv, max_seq_len=64)
                x = torch.randn(B, S, d, device="cuda", dtype=dtype)
                x1, x2 = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
                q, k, v = m(x1)
                cos, sin = qr.rope_tables(64, hd, 10000.0, "cuda")
                rq = hf_rope(lin[0](x2).view(B, S, h, hd).transpose(1, 2).float(), cos[:S], sin[:S]).to(dtype)
                rk = hf_rope(lin[1](x2).view(B, S, hkv, hd).transpose(1, 2).float(), cos[:S], sin[:S]).to(dtype)
                rv = lin[2](x2).view(B, S, hkv, hd).transpose(1, 2)
                for got, want, name in ((q, rq, "q"), (k, rk, "k"), (v, rv, "v")):
                    torch.testing.assert_close(got.float(), want.float(), rtol=rtol, atol=rtol,
                                               msg=lambda s: f"seed {self.seed} {name}: {s}")
                g = [torch.randn_like(t) for t in (q, k, v)]
                torch.autograd.backward((q, k, v), g)
                torch.autograd.backward((rq, rk, rv), g)
                torch.testing.assert_close(x1.grad.float(), x2.grad.float(), rtol=rtol, atol=rtol)
                ref_w = torch.cat([l.weight.grad for l in lin])
                ref_b = torch.cat([l.bias.grad for l in lin])
                atol = rtol * math.sqrt(B * S)  # weight gradients sum B * S products
                torch.testing.assert_close(m.weight.grad.float(), ref_w.float(), rtol=rtol, atol=atol)
                torch.testing.assert_close(m.bias.grad.float(), ref_b.float(), rtol=rtol, atol=atol)


if __name__ == "__main__":
    unittest.main()
