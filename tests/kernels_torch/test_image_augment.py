"""GPU image augmentation through PyTorch (issue #31 item 3).

CPU (torch + torchvision): JPEGs the test encodes decode back; a JPEG that
does not decode is a JpegError naming its index, or is skipped and counted;
the parameter layout the front reads is the kernel's 32 bytes.

GPU (the extension and a CUDA GPU): nvJPEG decode, then the fused kernel
against torchvision's own ops with the kernel's parameters on fresh random
images: every value within one bf16 step (2^-7 relative) plus 1e-5 pixel
units / std, nearly all equal; the same (seed, first) gives the same batch,
another seed another; explicit parameters are used as given, and a box
outside its image is refused before any launch.
"""

import importlib
import unittest

try:
    import torch
    import torchvision  # noqa: F401
    from torchvision.io import encode_jpeg
except ImportError:  # no torch/torchvision here
    torch = None

ia = None
if torch is not None:
    try:
        ia = importlib.import_module("stepscope_kernels.image_augment")
    except ImportError:
        ia = None

HAS_KERNELS = ia is not None and torch.cuda.is_available()
if HAS_KERNELS:
    try:
        from stepscope_kernels import _C  # noqa: F401
    except ImportError:
        HAS_KERNELS = False


def jpegs(gen, sizes):
    out = []
    for h, w in sizes:
        img = torch.randint(0, 256, (3, h, w), dtype=torch.uint8, generator=gen)
        out.append(encode_jpeg(img, quality=90).numpy().tobytes())
    return out


@unittest.skipUnless(ia is not None, "needs torch, torchvision and stepscope_kernels")
class DecodeTest(unittest.TestCase):
    def test_decodes_and_names_bad_jpegs(self):
        gen = torch.Generator().manual_seed(1)
        data = jpegs(gen, [(40, 60), (17, 33)])
        aug = ia.GpuAugment(size=32)
        images = aug.decode(data, device="cpu")
        self.assertEqual([tuple(i.shape) for i in images], [(3, 40, 60), (3, 17, 33)])
        bad = data[:1] + [b"not a jpeg at all"] + data[1:]
        with self.assertRaises(ia.JpegError) as e:
            aug.decode(bad, device="cpu")
        self.assertEqual(e.exception.index, 1)
        images, kept = aug.decode(bad, device="cpu", skip_bad=True)
        self.assertEqual(kept, [0, 2])
        self.assertEqual(aug.skipped, 1)

    def test_params_layout(self):
        self.assertEqual(ia.PARAMS_DTYPE.itemsize, 32)
        self.assertEqual(ia.PARAMS_DTYPE.fields["brightness"][1], 20)


@unittest.skipUnless(HAS_KERNELS, "needs the extension and a CUDA GPU")
class KernelTest(unittest.TestCase):
    def setUp(self):
        self.seed = int(torch.randint(0, 2**31, ()).item())
        self.gen = torch.Generator().manual_seed(self.seed)

    def test_matches_torchvision_on_the_same_parameters(self):
        aug = ia.GpuAugment(size=(224, 192), brightness=0.4, contrast=0.4, saturation=0.4, seed=self.seed)
        sizes = [(375, 500), (1080, 1920), (33, 257), (480, 640), (7, 5)]
        images = aug.decode(jpegs(self.gen, sizes))
        out = aug(images, first=100)
        self.assertEqual(out.shape, (5, 3, 224, 192))
        self.assertEqual(out.dtype, torch.bfloat16)
        self.assertTrue(out.is_contiguous(memory_format=torch.channels_last))
        params = aug.params_of(aug.last_params)
        want = aug.reference(images, params).to(torch.bfloat16).float()
        got = out.float()
        bound = want.abs() * 2.0**-7 + 1e-5 / 0.224
        diff = (got - want).abs()
        self.assertTrue(bool((diff <= bound).all()), f"seed {self.seed}: max diff {float(diff.max())}")
        self.assertGreater(float((diff == 0).float().mean()), 0.99, f"seed {self.seed}")

    def test_deterministic_per_seed_and_explicit_params(self):
        images = ia.GpuAugment().decode(jpegs(self.gen, [(300, 400)] * 4))
        a = ia.GpuAugment(size=64, brightness=0.5, seed=3)
        first = a(images, first=8)
        self.assertTrue(torch.equal(first, a(images, first=8)))
        self.assertFalse(torch.equal(first, ia.GpuAugment(size=64, brightness=0.5, seed=4)(images, first=8)))
        params = a.params_of(a.last_params)
        self.assertTrue(torch.equal(first, a(images, params=params)))
        params["top"][0] = 299  # with its height, past the image's last row
        with self.assertRaises(RuntimeError) as e:
            a(images, params=params)
        self.assertIn("image 0: crop box", str(e.exception))

    def test_feed_gives_the_batches_of_in_line_calls_in_order(self):
        # GpuFeed makes batches on worker threads and their own streams: the
        # same tensors as decode + augment in line with the running sample
        # index, in the source's order, and a bad JPEG named from next().
        batches = [jpegs(self.gen, [(240, 320), (300, 200), (128, 128)]) for _ in range(5)]
        a = ia.GpuAugment(size=48, brightness=0.3, contrast=0.3, saturation=0.3, seed=11)
        want, first = [], 0
        for b in batches:
            want.append(a(a.decode(b), first=first))
            first += len(b)
        with ia.GpuFeed(a, batches, workers=3, depth=2) as feed:
            got = list(feed)
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertTrue(torch.equal(g, w))
        bad = [batches[0], batches[1][:1] + [b"not a jpeg"]]
        feed = ia.GpuFeed(a, bad, workers=2)
        next(feed)
        with self.assertRaises(ia.JpegError) as e:
            next(feed)
        self.assertEqual(e.exception.index, 1)
        feed.close()
        skipped = list(ia.GpuFeed(a, bad, workers=2, skip_bad=True))
        self.assertEqual([len(x) for x in skipped], [3, 1])


if __name__ == "__main__":
    unittest.main()
