"""Activation compression through PyTorch (issue #6 item 2), on fresh random
inputs (the seed is printed on failure):

* the CUDA kernels against the pure-torch reference: codes, scales and zero
  points bit for bit, dequantized values equal (both compute one fp32
  rounding of zero + code * scale, then one rounding to the dtype);
* error bounds: |x - x'| <= scale * (1/2 + 1e-4) + half an ulp of the dtype
  + 2^-23 |x'| (nearest), scale * (1 + 1e-4) + the same (stochastic); stochastic rounding
  unbiased and deterministic per seed; NaN/inf poison their block only;
* bad arguments rejected with messages naming them;
* the autograd functions against uncompressed autograd: forward bit-identical,
  gradients that use x within stated bounds (relative Frobenius error of
  grad_weight / grad_input; about 1.6x the value expected for Gaussian
  inputs: 8-bit 2e-2; 4-bit 0.15 nearest, 0.25 stochastic);
* compress_activations on a small model: same parameters, bit-identical
  forward, saved activation bytes >= 3x smaller at 4 bits.

Skips without torch, without the built extension or without a CUDA GPU
(the reference-only tests need just torch).
"""

import math
import os
import unittest

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:  # CI has no torch
    torch = None

ac = None
if torch is not None:
    try:
        from stepscope_kernels import activation_compression as ac
    except ImportError:
        ac = None

HAS_CUDA = torch is not None and torch.cuda.is_available()
HAS_KERNELS = ac is not None and ac._C is not None and HAS_CUDA
DTYPES = () if torch is None else (torch.bfloat16, torch.float16, torch.float32)
# Half an ulp of each dtype relative to the value (8, 11, 24 significant
# bits), for the final rounding of x' to the dtype.
HALF_ULP = {} if torch is None else {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11,
                                     torch.float32: 2.0 ** -24}


def fresh_seed():
    return int.from_bytes(os.urandom(4), "little")


def activations(n, dtype, device, gen):
    """Activation-like values: spread and offset change every 37 elements (so
    blocks mix scales), a few orders of magnitude apart."""
    groups = n // 37 + 1
    spread = torch.pow(10.0, torch.empty(groups).uniform_(-3, 2, generator=gen))
    offset = torch.randn(groups, generator=gen) * spread
    idx = torch.arange(n) // 37
    x = offset[idx] + spread[idx] * torch.randn(n, generator=gen)
    return x.to(dtype).to(device)


def bits_of(t):
    return t.view(torch.int16)


def rel_err(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm().clamp_min(1e-30)).item()


class Case(unittest.TestCase):
    def setUp(self):
        if torch is None:
            self.skipTest("torch is not installed")
        if ac is None:
            self.skipTest("stepscope_kernels is not importable")
        self.seed = fresh_seed()
        self.gen = torch.Generator().manual_seed(self.seed)
        torch.manual_seed(self.seed)

    def msg(self, text=""):
        return f"seed {self.seed}: {text}"

    def check_bound(self, x, q, xr, stochastic, what):
        n = x.numel()
        s = q.scale.float().repeat_interleave(q.block)[:n]
        xf, rf = x.float().reshape(-1), xr.float().reshape(-1)
        finite = torch.isfinite(s)
        step = 1.0 if stochastic else 0.5
        # + the fp32 rounding of the fma (2^-24 relative) and a denormal-sized floor
        bound = s * (step + 1e-4) + rf.abs() * (HALF_ULP[x.dtype] + 2.0 ** -23) + 2.0 ** -149
        if x.dtype == torch.float16:
            bound = bound + 2.0 ** -25  # fp16 subnormal spacing
        err = (xf - rf).abs()
        bad = finite & ~(err <= bound)
        if bad.any():
            i = int(bad.nonzero()[0])
            self.fail(self.msg(f"{what}: element {i}: x {xf[i].item()} -> {rf[i].item()}, "
                               f"scale {s[i].item()}, bound {bound[i].item()}"))


@unittest.skipUnless(HAS_KERNELS, "needs a CUDA GPU and the built extension")
class KernelVsReference(Case):
    def test_bit_exact_against_the_torch_reference(self):
        for dtype in DTYPES:
            for n in (1, 7, 63, 64, 65, 1000, 262147, 3 * 2 ** 20 + 5):
                x = activations(n, dtype, "cuda", self.gen)
                for bits in (4, 8):
                    for block in (64, 128):
                        for stochastic in (False, True):
                            what = f"{dtype} n={n} bits={bits} block={block} stochastic={stochastic}"
                            seed = fresh_seed()
                            q = ac.quantize(x, bits, block, stochastic, seed)
                            r = ac.quantize_reference(x, bits, block, stochastic, seed)
                            self.assertEqual(q.codes.numel(), n if bits == 8 else (n + 1) // 2)
                            self.assertEqual(q.scale.numel(), -(-n // block))
                            self.assertTrue(torch.equal(bits_of(q.scale), bits_of(r.scale)), self.msg(what))
                            self.assertTrue(torch.equal(bits_of(q.zero), bits_of(r.zero)), self.msg(what))
                            if not torch.equal(q.codes, r.codes):
                                i = int((q.codes != r.codes).nonzero()[0])
                                self.fail(self.msg(f"{what}: code byte {i}: {q.codes[i].item()} vs "
                                                   f"{r.codes[i].item()}"))
                            xr = ac.dequantize(q)
                            self.assertEqual(xr.dtype, dtype)
                            self.assertEqual(xr.shape, x.shape)
                            torch.testing.assert_close(xr, ac.dequantize_reference(r), rtol=0, atol=0,
                                                       equal_nan=True, msg=self.msg(what))
                            self.check_bound(x, q, xr, stochastic, what)

    def test_cpu_reference_gives_the_same_codes(self):
        x = activations(70001, torch.bfloat16, "cuda", self.gen)
        for stochastic in (False, True):
            q = ac.quantize(x, 4, 64, stochastic, 99)
            r = ac.quantize_reference(x.cpu(), 4, 64, stochastic, 99)
            self.assertTrue(torch.equal(q.codes.cpu(), r.codes), self.msg(f"stochastic={stochastic}"))
            self.assertTrue(torch.equal(bits_of(q.scale).cpu(), bits_of(r.scale)), self.msg())

    def test_shapes_round_trip(self):
        x = activations(3 * 5 * 77, torch.bfloat16, "cuda", self.gen).view(3, 5, 77)
        q = ac.quantize(x, 8, 128)
        self.assertEqual(q.shape, x.shape)
        self.assertEqual(ac.dequantize(q).shape, x.shape)
        empty = ac.quantize(torch.empty(0, 16, device="cuda", dtype=torch.bfloat16))
        self.assertEqual(ac.dequantize(empty).shape, (0, 16))

    def test_memory_of_the_compressed_form(self):
        x = torch.randn(4096, 1024, device="cuda", dtype=torch.bfloat16)
        for bits, block, want in ((4, 64, 4.5), (4, 128, 4.25), (8, 64, 8.5), (8, 128, 8.25)):
            q = ac.quantize(x, bits, block)
            self.assertAlmostEqual(q.nbytes() * 8 / x.numel(), want, places=6)
        self.assertGreaterEqual(x.numel() * 2 / ac.quantize(x, 4, 64).nbytes(), 3.5)

    def test_dequantize_writes_every_element(self):
        # Output buffers poisoned with NaN and with a finite sentinel.
        for dtype in DTYPES:
            for n in (5, 64, 129, 100003):
                x = activations(n, dtype, "cuda", self.gen)
                for bits in (4, 8):
                    q = ac.quantize(x, bits, 64)
                    want = ac.dequantize_reference(q)
                    for poison in (float("nan"), 12345.0):
                        out = torch.full((n + 8,), poison, dtype=dtype, device="cuda")[:n]
                        ac._C.act_dequantize(q.codes, q.scale, q.zero, out, bits, 64)
                        torch.testing.assert_close(out, want.view(-1), rtol=0, atol=0, equal_nan=True,
                                                   msg=self.msg(f"{dtype} n={n} bits={bits} poison={poison}"))
                        self.assertTrue(torch.isfinite(out).all(), self.msg("finite input"))

    def test_quantize_writes_every_output(self):
        # Free blocks of the caching allocator filled with 0xA5 first: the
        # kernel's outputs are likely carved from them; every byte is compared.
        for n in (65, 4097, 1 << 20):
            junk = torch.full((4 * n + 4096,), 0xA5, dtype=torch.uint8, device="cuda")
            del junk
            x = activations(n, torch.float16, "cuda", self.gen)
            q = ac.quantize(x, 4, 128)
            r = ac.quantize_reference(x, 4, 128)
            self.assertTrue(torch.equal(q.codes, r.codes), self.msg(f"n={n}"))
            self.assertTrue(torch.equal(bits_of(q.zero), bits_of(r.zero)), self.msg(f"n={n}"))

    def test_non_finite_values_poison_their_block_only(self):
        for dtype in DTYPES:
            x = activations(64 * 4 + 9, dtype, "cuda", self.gen)
            x[70] = float("nan")
            x[-1] = float("-inf")
            q = ac.quantize(x, 4, 64)
            xr = ac.dequantize(q).float()
            blk = torch.arange(x.numel(), device="cuda") // 64
            poisoned = (blk == 1) | (blk == 4)
            self.assertTrue(torch.isnan(xr[poisoned]).all(), self.msg(str(dtype)))
            self.assertTrue(torch.isfinite(xr[~poisoned]).all(), self.msg(str(dtype)))
            self.assertTrue(torch.isnan(q.scale.float()[[1, 4]]).all())
            self.check_bound(x, q, xr.to(dtype), False, str(dtype))

    def test_constant_blocks_are_exact(self):
        x = torch.full((1000,), -2.375, dtype=torch.bfloat16, device="cuda")
        q = ac.quantize(x, 4, 64)
        self.assertTrue(torch.equal(ac.dequantize(q), x))
        self.assertTrue((q.scale == 0).all())


@unittest.skipUnless(HAS_KERNELS, "needs a CUDA GPU and the built extension")
class StochasticRounding(Case):
    def test_unbiased_where_nearest_is_biased(self):
        # Blocks of 64: 0, 15 and levels k + f: scale 1, zero 0, grid position
        # k + f. Nearest is off by -f or 1 - f; stochastic by 0 on average.
        n = 64 * 65536
        for f in (0.25, 0.75):
            lv = torch.randint(0, 15, (n,), generator=self.gen).float() + f
            lv[0::64], lv[1::64] = 0.0, 15.0
            x = lv.to(torch.bfloat16).cuda()
            inner = torch.ones(n, dtype=torch.bool, device="cuda")
            inner[0::64] = inner[1::64] = False
            es = (ac.dequantize(ac.quantize(x, 4, 64, True)).float() - x.float())[inner]
            en = (ac.dequantize(ac.quantize(x, 4, 64, False)).float() - x.float())[inner]
            sem = math.sqrt(f * (1 - f) / inner.sum().item())
            self.assertLess(abs(es.mean().item()), 6 * sem, self.msg(f"f={f}"))
            self.assertAlmostEqual((es > 0).float().mean().item(), f, delta=6 * sem)
            self.assertGreater(abs(en.mean().item()), 0.2, "nearest is biased here: the test can tell")

    def test_deterministic_per_seed(self):
        x = activations(100000, torch.bfloat16, "cuda", self.gen)
        a = ac.quantize(x, 4, 64, True, seed=1234)
        b = ac.quantize(x, 4, 64, True, seed=1234)
        c = ac.quantize(x, 4, 64, True, seed=1235)
        self.assertTrue(torch.equal(a.codes, b.codes))
        ca, cc = ac.unpack_codes(a), ac.unpack_codes(c)
        self.assertGreater((ca != cc).float().mean().item(), 0.2)  # ~1/3 for uniform fractions
        d, e = ac.quantize(x, 4, 64, True), ac.quantize(x, 4, 64, True)  # seeds drawn from torch
        self.assertFalse(torch.equal(d.codes, e.codes))
        torch.manual_seed(7)
        f1 = ac.quantize(x, 4, 64, True)
        torch.manual_seed(7)
        f2 = ac.quantize(x, 4, 64, True)
        self.assertTrue(torch.equal(f1.codes, f2.codes))


@unittest.skipUnless(HAS_KERNELS, "needs a CUDA GPU and the built extension")
class BadArguments(Case):
    def test_python_front(self):
        x = torch.randn(256, device="cuda", dtype=torch.bfloat16)
        cases = [
            (dict(x=x, bits=3), ValueError, "bits must be 4 or 8, got 3"),
            (dict(x=x, block=32), ValueError, "block must be 64 or 128, got 32"),
            (dict(x=x.view(16, 16).t()), ValueError, "contiguous"),
            (dict(x=x.cpu()), ValueError, "CUDA tensor"),
            (dict(x=torch.ones(8, dtype=torch.int32, device="cuda")), ValueError, "bfloat16, float16 or float32"),
            (dict(x=[1.0, 2.0]), TypeError, "torch.Tensor"),
        ]
        for kwargs, exc, text in cases:
            with self.assertRaisesRegex(exc, text):
                ac.quantize(**kwargs)
        with self.assertRaisesRegex(ValueError, "bits must be 4 or 8"):
            ac.compress_activations(nn.Sequential(nn.Linear(4, 4)), bits=2)
        with self.assertRaisesRegex(ValueError, "types may only hold"):
            ac.compress_activations(nn.Sequential(nn.Linear(4, 4)), types=(nn.ReLU,))
        with self.assertRaisesRegex(ValueError, "pass a module that contains it"):
            ac.compress_activations(nn.Linear(4, 4))

    def test_extension_checks(self):
        x = torch.randn(256, device="cuda", dtype=torch.bfloat16)
        with self.assertRaisesRegex(RuntimeError, "bits must be 4 or 8, got 5"):
            ac._C.act_quantize(x, 5, 64, False, 0)
        with self.assertRaisesRegex(RuntimeError, "x must be contiguous"):
            ac._C.act_quantize(x.view(16, 16).t(), 4, 64, False, 0)
        with self.assertRaisesRegex(RuntimeError, "x must be a CUDA tensor"):
            ac._C.act_quantize(x.cpu(), 4, 64, False, 0)
        with self.assertRaisesRegex(RuntimeError, "x must be bfloat16, float16 or float32"):
            ac._C.act_quantize(x.double(), 4, 64, False, 0)
        q = ac.quantize(x, 4, 64)
        out = torch.empty(256, device="cuda", dtype=torch.bfloat16)
        with self.assertRaisesRegex(RuntimeError, "codes has 127 bytes"):
            ac._C.act_dequantize(q.codes[:-1], q.scale, q.zero, out, 4, 64)
        with self.assertRaisesRegex(RuntimeError, "scale and zero must have 4 entries"):
            ac._C.act_dequantize(q.codes, q.scale[:3], q.zero, out, 4, 64)
        with self.assertRaisesRegex(RuntimeError, "codes must be uint8"):
            ac._C.act_dequantize(q.codes.to(torch.int8), q.scale, q.zero, out, 4, 64)
        with self.assertRaisesRegex(RuntimeError, "out must be bfloat16, float16 or float32"):
            ac._C.act_dequantize(q.codes, q.scale, q.zero, out.to(torch.int16), 4, 64)


# Bounds on relative gradient error (see the module docstring).
GRAD_BOUND = {(8, False): 2e-2, (8, True): 2e-2, (4, False): 0.15, (4, True): 0.25}


class AutogradFunctions(Case):
    """Runs on the GPU with the kernels, and on the CPU through the reference."""

    def setUp(self):
        super().setUp()
        if HAS_CUDA:
            torch.backends.cuda.matmul.allow_tf32 = False
        self.devs = (["cuda"] if HAS_KERNELS else []) + ["cpu"]

    def configs(self):
        for bits in (8, 4):
            for stochastic in (False, True):
                yield ac.CompressionConfig(bits, 64, stochastic, seed=self.seed), GRAD_BOUND[(bits, stochastic)]

    def test_linear(self):
        for dev in self.devs:
            for dtype in (torch.float32, torch.bfloat16):
                for cfg, bound in self.configs():
                    what = f"{dev} {dtype} {cfg}"
                    x = torch.randn(4, 96, 256, generator=self.gen).to(dev, dtype)
                    lin = nn.Linear(256, 320).to(dev, dtype)
                    g = torch.randn(4, 96, 320, generator=self.gen).to(dev, dtype)
                    x1 = x.clone().requires_grad_()
                    y1 = lin(x1)
                    y1.backward(g)
                    gw1, gb1 = lin.weight.grad.clone(), lin.bias.grad.clone()
                    lin.zero_grad()
                    x2 = x.clone().requires_grad_()
                    y2 = ac.CompressedLinearFunction.apply(x2, lin.weight, lin.bias, cfg)
                    self.assertTrue(torch.equal(y1, y2), self.msg(what + ": forward"))
                    y2.backward(g)
                    tight = 1e-5 if dtype == torch.float32 else 1e-2
                    self.assertLess(rel_err(x2.grad, x1.grad), tight, self.msg(what + ": grad_input"))
                    self.assertLess(rel_err(lin.bias.grad, gb1), tight, self.msg(what + ": grad_bias"))
                    self.assertLess(rel_err(lin.weight.grad, gw1), bound, self.msg(what + ": grad_weight"))

    def test_gelu(self):
        for dev in self.devs:
            for dtype in (torch.float32, torch.bfloat16):
                for approximate in ("none", "tanh"):
                    for cfg, bound in self.configs():
                        what = f"{dev} {dtype} {approximate} {cfg}"
                        x = torch.randn(8, 1000, generator=self.gen).to(dev, dtype)
                        g = torch.randn(8, 1000, generator=self.gen).to(dev, dtype)
                        x1 = x.clone().requires_grad_()
                        y1 = F.gelu(x1, approximate=approximate)
                        y1.backward(g)
                        x2 = x.clone().requires_grad_()
                        y2 = ac.CompressedGELUFunction.apply(x2, approximate, cfg)
                        self.assertTrue(torch.equal(y1, y2), self.msg(what + ": forward"))
                        y2.backward(g)
                        self.assertLess(rel_err(x2.grad, x1.grad), bound, self.msg(what))

    def test_layer_norm(self):
        for dev in self.devs:
            for dtype in (torch.float32, torch.bfloat16):
                for cfg, bound in self.configs():
                    what = f"{dev} {dtype} {cfg}"
                    # rows with their own offsets: the normalisation matters
                    x = (torch.randn(64, 512, generator=self.gen) * 2
                         + torch.randn(64, 1, generator=self.gen) * 5).to(dev, dtype)
                    ln = nn.LayerNorm(512).to(dev, dtype)
                    with torch.no_grad():
                        ln.weight.normal_(1.0, 0.3, generator=None)
                        ln.bias.normal_(0.0, 0.3)
                    g = torch.randn(64, 512, generator=self.gen).to(dev, dtype)
                    x1 = x.clone().requires_grad_()
                    y1 = ln(x1)
                    y1.backward(g)
                    gw1, gb1 = ln.weight.grad.clone(), ln.bias.grad.clone()
                    ln.zero_grad()
                    x2 = x.clone().requires_grad_()
                    y2 = ac.CompressedLayerNormFunction.apply(x2, [512], ln.weight, ln.bias, ln.eps, cfg)
                    self.assertTrue(torch.equal(y1, y2), self.msg(what + ": forward"))
                    y2.backward(g)
                    self.assertLess(rel_err(x2.grad, x1.grad), bound, self.msg(what + ": grad_input"))
                    self.assertLess(rel_err(ln.weight.grad, gw1), bound, self.msg(what + ": grad_weight"))
                    tight = 1e-5 if dtype == torch.float32 else 1e-2
                    self.assertLess(rel_err(ln.bias.grad, gb1), tight, self.msg(what + ": grad_bias"))

    def test_autocast(self):
        if not HAS_KERNELS:
            self.skipTest("needs CUDA")
        model = nn.Sequential(nn.LayerNorm(256), nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256)).cuda()
        ref = nn.Sequential(*[m for m in model])  # same modules, later compared uncompressed
        x = torch.randn(32, 256, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y_ref = ref(x)
        y_ref.float().sum().backward()
        grads_ref = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        self.assertEqual(ac.compress_activations(model, bits=8), 4)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = model(x)
        self.assertEqual(y.dtype, y_ref.dtype)
        self.assertTrue(torch.equal(y, y_ref), self.msg("autocast forward"))
        y.float().sum().backward()
        for p, g in zip(model.parameters(), grads_ref):
            self.assertEqual(p.grad.dtype, p.dtype)
            self.assertLess(rel_err(p.grad, g), 5e-2, self.msg("autocast grads"))


class SmallModel(nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))
        self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d)) for _ in range(2)])
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.head = nn.Linear(d, 16, bias=False)

    def forward(self, x):
        x = x + self.mlp(self.ln(x))
        for b in self.blocks:
            x = x + b(x)
        x = x + self.attn(x, x, x, need_weights=False)[0]
        return self.head(x)


class CompressActivations(Case):
    def setUp(self):
        super().setUp()
        if not HAS_KERNELS:
            self.skipTest("needs a CUDA GPU and the built extension")

    def test_wraps_in_place_and_keeps_forward_bitwise(self):
        for bits in (4, 8):
            torch.manual_seed(self.seed)
            model = SmallModel().cuda().to(torch.bfloat16)
            x = torch.randn(4, 64, 256, device="cuda", dtype=torch.bfloat16)
            y_ref = model(x)
            y_ref.float().square().mean().backward()
            grads_ref = {n: p.grad.clone() for n, p in model.named_parameters()}
            model.zero_grad()
            params_before = {n: p for n, p in model.named_parameters()}
            # ln, mlp.0, mlp.1 (GELU), mlp.2, 2 x (LayerNorm, Linear), head; not attn.out_proj
            self.assertEqual(ac.compress_activations(model, bits=bits), 9)
            self.assertIsInstance(model.mlp[1], ac.CompressedGELU)
            self.assertIsInstance(model.blocks[1][0], ac.CompressedLayerNorm)
            self.assertIsInstance(model.attn.out_proj, nn.Linear)
            params_after = dict(model.named_parameters())
            self.assertEqual(params_before.keys(), params_after.keys())
            for n, p in params_after.items():
                self.assertIs(p, params_before[n], n)
            y = model(x)
            self.assertTrue(torch.equal(y, y_ref), self.msg("forward must be bit-identical"))
            y.float().square().mean().backward()
            flat = torch.cat([p.grad.float().reshape(-1) for n, p in model.named_parameters()])
            flat_ref = torch.cat([grads_ref[n].float().reshape(-1) for n, _ in model.named_parameters()])
            bound = 5e-2 if bits == 8 else 0.3
            self.assertLess(rel_err(flat, flat_ref), bound, self.msg(f"bits={bits}: model gradient"))
            self.assertEqual(ac.compress_activations(model, bits=bits), 0, "already wrapped")

    def test_saved_activation_bytes_shrink(self):
        model = nn.Sequential(nn.LayerNorm(1024), nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024))
        model = model.cuda().to(torch.bfloat16)
        x = torch.randn(8, 512, 1024, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        params = {p.untyped_storage().data_ptr() for p in model.parameters()}

        def saved_bytes():
            seen = {}

            def pack(t):
                st = t.untyped_storage()
                if st.data_ptr() not in params:
                    seen[st.data_ptr()] = st.nbytes()
                return t

            with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                y = model(x)
            y.sum().backward()
            return sum(seen.values())

        base = saved_bytes()
        self.assertEqual(ac.compress_activations(model, bits=4), 4)
        small = saved_bytes()
        # x, LN output, fc1 output, GELU output: 2 + 2 + 8 + 8 bytes per token-dim unit,
        # at 4.5 bits instead of 16 (+ LN mean/rstd): 3.5x.
        self.assertGreaterEqual(base / small, 3.0, self.msg(f"{base} -> {small} bytes"))
        self.assertLessEqual(base / small, 16 / 4.5 + 0.01)


@unittest.skipUnless(torch is not None and ac is not None, "needs torch")
class ReferenceOnly(Case):
    """The pure-torch reference on the CPU (no GPU needed)."""

    def test_error_bounds_and_sizes(self):
        for dtype in DTYPES:
            for n in (1, 65, 4099):
                x = activations(n, dtype, "cpu", self.gen)
                for bits in (4, 8):
                    for stochastic in (False, True):
                        q = ac.quantize_reference(x, bits, 64, stochastic, 5)
                        self.assertEqual(q.codes.numel(), n if bits == 8 else (n + 1) // 2)
                        self.check_bound(x, q, ac.dequantize_reference(q), stochastic,
                                         f"{dtype} n={n} bits={bits}")

    def test_packing_order_by_hand(self):
        x = torch.tensor([float((i * 7) % 16) for i in range(64)])
        q = ac.quantize_reference(x, 4, 64)
        self.assertEqual(q.codes[:3].tolist(), [0x70, 0x5E, 0x3C])
        self.assertEqual(q.scale.float().item(), 1.0)
        self.assertEqual(q.zero.float().item(), 0.0)

    def test_counter_hash_matches_known_values(self):
        # Values printed by the C++ header (activation_quant_format.h) for seed 1.
        key = ac._mix_seed(1)
        self.assertEqual(key, 10451216379200822465)
        want = [160, 138, 62, 188, 117, 129, 4, 252]
        idx = [0, 1, 2, 3, 63, 1000003, (1 << 34) + 5, (1 << 35) + 4]
        self.assertEqual([ac._uniform8(key, i) for i in idx], want)  # Python ints
        self.assertEqual(ac._uniform8(key, torch.tensor(idx)).tolist(), want)  # int64 tensors


if __name__ == "__main__":
    unittest.main()
