"""The fused augmentation's CPU reference (src/kernels/image_augment_*)
against torchvision's own ops on the same parameters: resized_crop (bilinear,
antialias=False), hflip, adjust_brightness / adjust_contrast /
adjust_saturation in the drawn order, normalize, then bf16. The CUDA kernel
is tested against this reference on the H200; together they tie the kernel
to torchvision. Skips without torch and torchvision
(python/requirements-test.txt installs both)."""

import unittest

from stepscope import _stepscope

try:
    import numpy as np
    import torch
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms.v2 import functional as F
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

# Tolerance: one bf16 step (at most 2^-7 of the value: 7 stored mantissa
# bits), plus 1e-5 in [0, 1] pixel units before normalization (1e-5 / std
# after it) for values near zero, where (x - mean) / std cancels. The two
# sides sum the contrast mean in different orders and order the bilinear and
# blend arithmetic differently: about 2e-6 in pixel units at most, measured
# (2026-12-05: 99.98% of values the same bf16, the largest excess over one
# step 8.7e-6 after normalization).
BF16_REL = 2.0 ** -7
PIXEL_ABS = 1e-5


def torchvision_augment(image, p, c):
    x = torch.from_numpy(image).to(torch.float32) / 255.0
    x = F.resized_crop(x, p.top, p.left, p.height, p.width, [c.out_h, c.out_w],
                       interpolation=InterpolationMode.BILINEAR, antialias=False)
    if p.flip:
        x = F.horizontal_flip(x)
    for op in p.order:
        if op == 0:
            x = F.adjust_brightness(x, p.brightness)
        elif op == 1:
            x = F.adjust_contrast(x, p.contrast)
        else:
            x = F.adjust_saturation(x, p.saturation)
    x = F.normalize(x, c.mean, c.std)
    return x.permute(1, 2, 0).to(torch.bfloat16).to(torch.float32)


def images(rng):
    """Noise (the hardest case for interpolation), a smooth gradient, and odd sizes."""
    out = []
    for h, w in ((375, 500), (64, 48), (33, 257), (500, 333)):
        out.append(rng.integers(0, 256, size=(3, h, w), dtype=np.uint8))
        yy, xx = np.mgrid[0:h, 0:w]
        smooth = np.stack([(xx * 255 // max(1, w - 1)), (yy * 255 // max(1, h - 1)), (xx + yy) % 256])
        out.append(smooth.astype(np.uint8))
    return out


@unittest.skipUnless(torch is not None, "needs torch and torchvision")
class ReferenceAgainstTorchvisionTest(unittest.TestCase):
    def test_same_parameters_same_images(self):
        rng = np.random.default_rng(2026)
        imgs = images(rng)
        c = _stepscope.AugmentConfig()
        c.out_h, c.out_w = 96, 128
        c.brightness, c.contrast, c.saturation = 0.4, 0.4, 0.4
        worst, equal, total = 0.0, 0, 0
        for seed in range(4):
            params = _stepscope.augment_draw_params([im.shape[1:] for im in imgs], c, seed)
            ours = _stepscope.augment_reference(imgs, params, c)
            ours = torch.from_numpy(ours.view(np.int16)).view(torch.bfloat16).to(torch.float32)
            for i, (im, p) in enumerate(zip(imgs, params)):
                want = torchvision_augment(im, p, c)
                diff = (ours[i] - want).abs()
                bound = want.abs() * BF16_REL + PIXEL_ABS / min(c.std)
                self.assertTrue(bool((diff <= bound).all()),
                                f"seed {seed} image {i}: max diff {float(diff.max())} "
                                f"at {np.unravel_index(int(diff.argmax()), diff.shape)}")
                worst = max(worst, float((diff / bound).max()))
                equal += int((diff == 0).sum())
                total += diff.numel()
        # Nearly all values are the same bf16; the rest one step apart.
        self.assertGreater(equal / total, 0.99, f"{equal}/{total} equal")

    def test_bad_images_raise(self):
        c = _stepscope.AugmentConfig()
        with self.assertRaises(ValueError):
            _stepscope.augment_reference([np.zeros((4, 8, 8), np.uint8)], [_stepscope.AugmentParams()], c)
        with self.assertRaises(ValueError):
            _stepscope.augment_reference([np.zeros((3, 0, 8), np.uint8)], [_stepscope.AugmentParams()], c)


if __name__ == "__main__":
    unittest.main()
