"""GPU image augmentation (issue #31 item 3): JPEG decode on the GPU (nvJPEG,
through ``torchvision.io.decode_jpeg(device="cuda")``), then one fused kernel
for RandomResizedCrop (bilinear, a box per sample) + horizontal flip +
ColorJitter (brightness, contrast, saturation) + Normalize, writing a bf16
channels-last batch.

    aug = GpuAugment(size=224, brightness=0.4, contrast=0.4, saturation=0.4, seed=0)
    images = aug.decode(jpeg_bytes)                # list of CUDA uint8 (3, H, W)
    batch = aug(images, first=step * batch_size)   # bf16 [N, 3, 224, 224], channels_last

The draws are a pure function of (seed, sample index): ``first`` is the
index of ``images[0]`` in the epoch's order, so a batch augments the same on
any machine and after a resume. The semantics (docs/kernels.md, "Image
augmentation") are torchvision's ops on float images with antialias=False;
``reference`` applies torchvision's own ops with the same parameters.
"""

import threading

import numpy as np
import torch

# AugmentParams as the kernel writes them (src/kernels/image_augment_params.h): 32 bytes.
PARAMS_DTYPE = np.dtype([("top", "<i4"), ("left", "<i4"), ("height", "<i4"), ("width", "<i4"), ("flip", "u1"),
                         ("order", "u1", (3,)), ("brightness", "<f4"), ("contrast", "<f4"), ("saturation", "<f4")])
assert PARAMS_DTYPE.itemsize == 32

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class JpegError(ValueError):
    """A JPEG that does not decode, or decodes to an empty image: names the sample."""

    def __init__(self, index, what):
        super().__init__(f"sample {index}: {what}")
        self.index = index


class GpuAugment:
    def __init__(self, size=224, *, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), flip_p=0.5, brightness=0.0,
                 contrast=0.0, saturation=0.0, mean=IMAGENET_MEAN, std=IMAGENET_STD, seed=0):
        out_h, out_w = (size, size) if isinstance(size, int) else size
        self.config = [out_h, out_w, scale[0], scale[1], ratio[0], ratio[1], flip_p, brightness, contrast, saturation,
                       *mean, *std]
        if len(self.config) != 16:
            raise ValueError("mean and std need 3 values each")
        self.seed = int(seed)
        self.skipped = 0  # JPEGs left out by decode(skip_bad=True)
        self._count_lock = threading.Lock()  # GpuFeed's threads decode at once

    def decode(self, jpegs, device="cuda", skip_bad=False):
        """Decodes JPEG bytes (bytes, or uint8 CPU tensors) to uint8 (3, H, W) images on `device`.

        A JPEG that does not decode, or gives a zero-size image, raises
        :class:`JpegError` naming its index, or with ``skip_bad=True`` is left
        out and counted in ``skipped`` (returns the images and the kept indices).
        """
        from torchvision.io import ImageReadMode, decode_jpeg

        data = [j if isinstance(j, torch.Tensor) else torch.frombuffer(bytearray(j), dtype=torch.uint8) for j in jpegs]
        try:
            images = decode_jpeg(data, mode=ImageReadMode.RGB, device=device)
            good = list(range(len(data)))
        except RuntimeError:
            # The batch call fails as a whole: decode one by one to name the bad ones.
            images, good = [], []
            for i, d in enumerate(data):
                try:
                    images.append(decode_jpeg(d, mode=ImageReadMode.RGB, device=device))
                    good.append(i)
                except RuntimeError as e:
                    if not skip_bad:
                        raise JpegError(i, f"does not decode ({str(e).splitlines()[0]})") from None
                    self._skip()
        kept_images, kept = [], []
        for img, i in zip(images, good):
            if img.dim() != 3 or img.shape[0] != 3 or img.shape[1] == 0 or img.shape[2] == 0:
                if not skip_bad:
                    raise JpegError(i, f"decodes to an empty image {tuple(img.shape)}")
                self._skip()
                continue
            kept_images.append(img)
            kept.append(i)
        return (kept_images, kept) if skip_bad else kept_images

    def _skip(self):
        with self._count_lock:
            self.skipped += 1

    def __getstate__(self):  # a lock does not pickle
        state = self.__dict__.copy()
        del state["_count_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._count_lock = threading.Lock()

    def __call__(self, images, first=0, params=None):
        """The augmented batch (bf16 [N, 3, H, W], channels-last memory) of CUDA
        uint8 images; the parameters are those of samples first, first + 1, ...
        of the seed, or `params` (as :meth:`params_of` returns them)."""
        from . import _C

        raw = None if params is None else torch.from_numpy(np.ascontiguousarray(params, PARAMS_DTYPE).view(np.uint8))
        out, p = _C.image_augment(list(images), [float(x) for x in self.config], self.seed, int(first), raw)
        self.last_params = p
        return out

    @staticmethod
    def params_of(raw):
        """The parameters the last call used, as a numpy structured array (PARAMS_DTYPE)."""
        return raw.cpu().numpy().view(PARAMS_DTYPE)

    def reference(self, images, params):
        """torchvision's own ops with the same parameters, per image, in float32: the
        oracle of the tests (bf16 rounding left to the caller)."""
        from torchvision.transforms import InterpolationMode
        from torchvision.transforms.v2 import functional as F

        out_h, out_w = int(self.config[0]), int(self.config[1])
        mean, std = self.config[10:13], self.config[13:16]
        outs = []
        for img, p in zip(images, params):
            x = img.to(torch.float32) / 255.0
            x = F.resized_crop(x, int(p["top"]), int(p["left"]), int(p["height"]), int(p["width"]), [out_h, out_w],
                               interpolation=InterpolationMode.BILINEAR, antialias=False)
            if p["flip"]:
                x = F.horizontal_flip(x)
            for op in p["order"]:
                if op == 0:
                    x = F.adjust_brightness(x, float(p["brightness"]))
                elif op == 1:
                    x = F.adjust_contrast(x, float(p["contrast"]))
                else:
                    x = F.adjust_saturation(x, float(p["saturation"]))
            outs.append(F.normalize(x, mean, std))
        return torch.stack(outs)


class GpuFeed:
    """Augmented batches made ahead of the training loop (issue #31 item 4).

    ``workers`` threads each take the next batch of JPEG bytes from
    ``batches`` (any iterable of lists), decode it and augment it on a CUDA
    stream of their own, up to ``depth`` batches ahead; iterating yields the
    bf16 batches in order. The consumer's stream waits for a batch's event
    (no host synchronisation) and the batch is recorded on that stream for
    the allocator. Made in line, decoding held a ResNet-50 step of 1080p
    JPEGs at 3.7x its time on synthetic input (H200, docs/kernels.md); made
    ahead it overlaps the step (1.8x), but more than two threads did not
    decode faster: torchvision's nvJPEG path takes one call at a time.

    Sample indices count the samples of earlier batches, so the draws of a
    batch are the same whichever thread makes it (``first`` of
    :meth:`GpuAugment.__call__`). A JPEG that does not decode raises
    :class:`JpegError` from ``next()`` naming its index in the batch, or with
    ``skip_bad=True`` is left out and counted in ``augment.skipped``.

        feed = GpuFeed(aug, (read(paths[i:i + 256]) for i in range(0, len(paths), 256)))
        for batch in feed:
            loss = model(batch) ...
    """

    def __init__(self, augment, batches, *, workers=2, depth=4, device="cuda", skip_bad=False):
        import concurrent.futures

        if workers < 1 or depth < 1:
            raise ValueError(f"workers ({workers}) and depth ({depth}) must be positive")
        self.augment, self.device, self.skip_bad = augment, torch.device(device), skip_bad
        self._source = iter(batches)
        self._first = 0
        self._pending = []
        self._local = threading.local()
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="stepscope-feed")
        self._depth = depth
        self._fill()

    def _fill(self):
        while len(self._pending) < self._depth:
            try:
                jpegs = list(next(self._source))
            except StopIteration:
                return
            self._pending.append(self._pool.submit(self._make, jpegs, self._first))
            self._first += len(jpegs)

    def _make(self, jpegs, first):
        stream = getattr(self._local, "stream", None)
        if stream is None:
            stream = self._local.stream = torch.cuda.Stream(device=self.device)
        with torch.cuda.device(self.device), torch.cuda.stream(stream):
            images = self.augment.decode(jpegs, device=self.device, skip_bad=self.skip_bad)
            if self.skip_bad:
                images = images[0]
            batch = self.augment(images, first=first)
            done = torch.cuda.Event()
            done.record(stream)
        return batch, done

    def __iter__(self):
        return self

    def __next__(self):
        if not self._pending:
            self.close()
            raise StopIteration
        batch, done = self._pending.pop(0).result()
        self._fill()
        consumer = torch.cuda.current_stream(self.device)
        consumer.wait_event(done)
        batch.record_stream(consumer)
        return batch

    def close(self):
        """Stops making batches (those under way finish); called at the end of the iteration."""
        for f in self._pending:
            f.cancel()
        self._pending = []
        self._pool.shutdown(wait=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
