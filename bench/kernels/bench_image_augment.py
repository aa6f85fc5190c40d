#!/usr/bin/env python3
"""Image augmentation on the H200 (issue #31 item 4), one run:

  images/s and GPU busy % of
    (a) torchvision CPU transforms in DataLoader workers (4, 8, 16): decode_jpeg
        on the CPU, RandomResizedCrop, RandomHorizontalFlip, ColorJitter,
        ToDtype, Normalize (torchvision.transforms.v2), batches pinned and
        copied to the GPU;
    (b) transforms.v2 on GPU tensors: nvJPEG decode of the batch, then the same
        v2 transforms per image on the GPU (their sizes differ, so they cannot
        be stacked first), stacked;
    (c) stepscope_kernels.GpuAugment: nvJPEG decode, then the fused kernel.
  and a ResNet-50 training loop (torchvision, bf16 autocast, channels_last,
  SGD) fed by (c) in line, by (c) made ahead by GpuFeed's threads
  (--feed-workers), by synthetic GPU tensors, and by (a) with 2 workers: the
  median step time of each.

Targets: (c) >= 2x (b) and >= 10x (a) at 16 workers in images/s; the loop fed
by (c) within 10% of the synthetic loop, where (a) with 2 workers was >= 10x
slower. Data: JPEGs this script generates (smooth fields plus noise, 1920x1080
and mixed sizes, or with --sizes imagenet near ImageNet's 500x375; quality
90) in a temporary folder; no downloads. GPU busy %
is NVML's utilization (torch.cuda.utilization) sampled every 50 ms.

  python3 bench/kernels/bench_image_augment.py --json out.json            # the H200 run
  python3 bench/kernels/bench_image_augment.py --smoke                    # CPU path only, tiny
"""

import argparse
import itertools
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python", "stepscope_kernels"))

JITTER = dict(brightness=0.4, contrast=0.4, saturation=0.4)


# (height, width) cycled over the generated files. "hd": half of them
# 1920x1080 (the 1080p anchor), the rest of mixed sizes; "imagenet":
# sizes around ImageNet-1k's (most of its photos are near 500x375 or 375x500).
SIZES = {"hd": [(1080, 1920), (1080, 1920), (1080, 1920), (480, 640), (375, 500), (800, 1200)],
         "imagenet": [(375, 500), (500, 375), (333, 500), (500, 333), (400, 500), (375, 500)]}


def make_jpegs(folder, n, seed=0, sizes="hd"):
    """n JPEG files: smooth random fields plus noise, of the SIZES[sizes] cycle."""
    from torchvision.io import encode_jpeg

    g = torch.Generator().manual_seed(seed)
    sizes = SIZES[sizes]
    paths = []
    for i in range(n):
        h, w = sizes[i % len(sizes)]
        coarse = torch.rand((1, 3, 9, 16), generator=g)
        field = torch.nn.functional.interpolate(coarse, size=(h, w), mode="bicubic", align_corners=False)[0]
        img = (field * 200 + torch.rand((3, h, w), generator=g) * 55).clamp(0, 255).to(torch.uint8)
        p = os.path.join(folder, f"{i:05d}.jpg")
        with open(p, "wb") as f:
            f.write(encode_jpeg(img, quality=90).numpy().tobytes())
        paths.append(p)
    return paths


def read_bytes(paths):
    out = []
    for p in paths:
        with open(p, "rb") as f:
            out.append(f.read())
    return out


def v2_pipeline(size, antialias=False):
    # antialias=False by default: the op the fused kernel computes (its
    # bilinear has no antialias filter); --antialias times torchvision's
    # default instead, which does more work per pixel when downscaling.
    from torchvision.transforms import v2

    return v2.Compose([v2.RandomResizedCrop(size, antialias=antialias), v2.RandomHorizontalFlip(),
                       v2.ColorJitter(**JITTER), v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])


class JpegFolder(torch.utils.data.Dataset):
    """(a): a file per sample, decoded and transformed on the CPU in the worker."""

    def __init__(self, paths, size, antialias=False):
        self.paths, self.transform = paths, v2_pipeline(size, antialias)

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        from torchvision.io import ImageReadMode, decode_jpeg, read_file

        return self.transform(decode_jpeg(read_file(self.paths[i]), mode=ImageReadMode.RGB))


class BusySampler:
    """NVML utilization every 50 ms while running (None without a GPU or NVML)."""

    def __init__(self):
        self.samples, self._stop = [], threading.Event()

    def __enter__(self):
        def loop():
            while not self._stop.is_set():
                try:
                    self.samples.append(torch.cuda.utilization())
                except Exception:  # noqa: BLE001 - no NVML: no figure
                    return
                time.sleep(0.05)
        self._t = threading.Thread(target=loop, daemon=True)
        if torch.cuda.is_available():
            self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._t.is_alive():
            self._t.join()

    def mean(self):
        return statistics.fmean(self.samples) if self.samples else None


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def time_cpu_loader(paths, size, workers, batch, device, antialias):
    loader = torch.utils.data.DataLoader(JpegFolder(paths, size, antialias), batch_size=batch, num_workers=workers,
                                         pin_memory=device == "cuda", prefetch_factor=4 if workers > 0 else None)
    n = 0
    with BusySampler() as busy:
        t0 = time.perf_counter()
        for x in loader:
            x = x.to(device, non_blocking=True)
            n += x.shape[0]
        sync()
        dt = time.perf_counter() - t0
    return {"images_per_s": n / dt, "gpu_busy_pct": busy.mean(), "images": n}


def batches_of(data, batch):
    return [data[i:i + batch] for i in range(0, len(data), batch)]


def time_gpu(fn, data, batch, warm=1):
    for b in batches_of(data, batch)[:warm]:
        fn(b)
    sync()
    n = 0
    with BusySampler() as busy:
        t0 = time.perf_counter()
        for b in batches_of(data, batch):
            fn(b)
            n += len(b)
        sync()
        dt = time.perf_counter() - t0
    return {"images_per_s": n / dt, "gpu_busy_pct": busy.mean(), "images": n}


def resnet_steps(feed, steps, batch, size):
    """Median step time (ms) of ResNet-50 training steps fed by feed() -> a bf16/fp32 [B, 3, size, size] CUDA batch."""
    import torchvision

    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    labels = torch.randint(0, 1000, (batch,), device="cuda")
    times = []
    for s in range(steps + 5):
        t0 = time.perf_counter()
        x = feed()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x.contiguous(memory_format=torch.channels_last)), labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if s >= 5:  # warm-up: cuDNN autotuning, allocator
            times.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--workers", default="4,8,16")
    ap.add_argument("--steps", type=int, default=30, help="ResNet-50 steps timed per feed")
    ap.add_argument("--feed-workers", default="2,4", help="GpuFeed threads, one loop each")
    ap.add_argument("--sizes", choices=sorted(SIZES), default="hd", help="the generated JPEGs' sizes")
    ap.add_argument("--antialias", action="store_true", help="baselines with torchvision's antialias=True")
    ap.add_argument("--smoke", action="store_true", help="CPU path only, 16 small images: checks the script runs")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.smoke:
        args.images, args.batch, args.workers = 16, 8, "0,2"
    device = "cuda" if torch.cuda.is_available() else "cpu"
    out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": platform.node(),
           "cpus": os.cpu_count(), "gpu": torch.cuda.get_device_name() if device == "cuda" else None,
           "torch": torch.__version__, "command": " ".join(sys.argv), "images": args.images, "batch": args.batch,
           "size": args.size, "jpeg_sizes": args.sizes, "antialias_baselines": args.antialias}
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_jpegs(tmp, args.images, sizes=args.sizes)
        out["jpeg_bytes"] = sum(os.path.getsize(p) for p in paths)
        res = {}
        for w in [int(x) for x in args.workers.split(",")]:
            res[f"cpu_torchvision_{w}_workers"] = time_cpu_loader(paths, args.size, w, args.batch, device,
                                                                  args.antialias)
            print(w, res[f"cpu_torchvision_{w}_workers"], flush=True)
        if device == "cuda" and not args.smoke:
            from stepscope_kernels.image_augment import GpuAugment

            data = read_bytes(paths)
            aug = GpuAugment(size=args.size, seed=0, **JITTER)
            tf = v2_pipeline(args.size, args.antialias)

            def v2_gpu(b):
                return torch.stack([tf(img) for img in aug.decode(b)])

            def fused(b):
                return aug(aug.decode(b))
            res["v2_on_gpu_tensors"] = time_gpu(v2_gpu, data, args.batch)
            res["fused_kernel"] = time_gpu(fused, data, args.batch)
            # The kernel alone, images already decoded on the GPU.
            decoded = [aug.decode(b) for b in batches_of(data, args.batch)]
            it = iter(range(10**9))
            res["fused_kernel_only"] = time_gpu(lambda b: aug(decoded[next(it) % len(decoded)]), data, args.batch)
            fu, v2r = res["fused_kernel"]["images_per_s"], res["v2_on_gpu_tensors"]["images_per_s"]
            cpu16 = res.get("cpu_torchvision_16_workers", {}).get("images_per_s")
            out["fused_vs_v2_gpu"] = fu / v2r
            out["fused_vs_cpu_16_workers"] = fu / cpu16 if cpu16 else None
            # ResNet-50 fed three ways.
            batches = batches_of(data, args.batch)
            k = iter(range(10**9))
            synthetic = torch.randn(args.batch, 3, args.size, args.size, device="cuda")
            loop = {"synthetic": resnet_steps(lambda: synthetic, args.steps, args.batch, args.size),
                    "fused_kernel": resnet_steps(lambda: aug(aug.decode(batches[next(k) % len(batches)])),
                                                 args.steps, args.batch, args.size)}
            # The same made ahead by GpuFeed's threads, each on its own stream.
            from stepscope_kernels.image_augment import GpuFeed

            for w in [int(x) for x in args.feed_workers.split(",")]:
                with GpuFeed(aug, itertools.cycle(batches), workers=w, depth=2 * w) as feed:
                    loop[f"fused_feed_{w}_threads"] = resnet_steps(lambda: next(feed), args.steps, args.batch,
                                                                   args.size)
            cpu_iter = iter(torch.utils.data.DataLoader(JpegFolder(paths * 10, args.size), batch_size=args.batch,
                                                        num_workers=2, pin_memory=True))
            loop["cpu_torchvision_2_workers"] = resnet_steps(lambda: next(cpu_iter).cuda(non_blocking=True),
                                                             min(args.steps, 10), args.batch, args.size)
            out["resnet50_step_ms"] = loop
            out["fused_loop_vs_synthetic"] = loop["fused_kernel"] / loop["synthetic"]
            out["fused_feed_loop_vs_synthetic"] = {k: v / loop["synthetic"] for k, v in loop.items()
                                                   if k.startswith("fused_feed_")}
            out["cpu2_loop_vs_synthetic"] = loop["cpu_torchvision_2_workers"] / loop["synthetic"]
        out["results"] = res
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
