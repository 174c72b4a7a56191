#!/usr/bin/env python3
"""PyTorch side of the Fashion-MNIST training benchmark (docs/benchmarks.md).

Trains the default CNN of `ember train` (conv 1->32 3x3 pad 1, BN, ReLU, max pool 2; conv
32->64 3x3 pad 1, BN, ReLU, max pool 2; Linear 3136->128, ReLU, Dropout 0.25, Linear
128->10) with Adam on the training images of Debian's Fashion-MNIST (the first 55000, the
number `ember train` trains on after holding out 5000 for validation), normalised with mean
0.2860 and std 0.3530, shuffled, and prints the images per second of the epoch (the loss of
every batch read back, as Ember's metrics do). The Ember side of the comparison is
`ember train --epochs 1 --batch-size N --threads T --no-tui`, whose train line prints
"Throughput ... items/s".

On a GPU (`--device cuda`) the images live on the device, the batches are gathered there,
and each epoch ends with a synchronisation; `ember train --device cuda` is the Ember side.
`--amp bf16|f16` runs the forward under torch.autocast (f16 with torch.amp.GradScaler), the
side of `ember train --mixed-precision bf16|f16`.

Usage: python3 benchmarks/train_fashion_mnist.py [--batch-size 64] [--threads 2]
       [--items 55000] [--repeat 1] [--device cpu|cuda] [--amp none|bf16|f16]
       [--dir /usr/share/datasets/fashion-mnist]
"""
import argparse
import gzip
import json
import os
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(64)
        self.fc1 = nn.Linear(3136, 128)
        self.fc2 = nn.Linear(128, 10)
        self.dropout = nn.Dropout(0.25)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        h = F.max_pool2d(F.relu(self.bn2(self.conv2(h))), 2)
        return self.fc2(self.dropout(F.relu(self.fc1(h.flatten(1)))))


def read_idx(path):
    """An IDX file of unsigned bytes (plain or gzipped) as a numpy array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    assert zero == 0 and dtype == 0x08, path
    dims = struct.unpack(">" + "I" * ndim, data[4 : 4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find(directory, name):
    for candidate in (name, name + ".gz"):
        path = os.path.join(directory, candidate)
        if os.path.exists(path):
            return path
    raise SystemExit(f"{name}[.gz] not found in {directory} (install dataset-fashion-mnist)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--items", type=int, default=55000)
    ap.add_argument("--repeat", type=int, default=1, help="epochs to time; the best is printed")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--amp", default="none", choices=["none", "bf16", "f16"],
                    help="mixed precision: torch.autocast in this dtype")
    ap.add_argument("--dir", default=os.environ.get("EMBER_FASHION_MNIST_DIR",
                                                    "/usr/share/datasets/fashion-mnist"))
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(42)

    images = read_idx(find(a.dir, "train-images-idx3-ubyte"))[: a.items]
    labels = read_idx(find(a.dir, "train-labels-idx1-ubyte"))[: a.items]
    x_all = (torch.from_numpy(images.astype(np.float32) / 255.0) - 0.2860) / 0.3530
    dev = torch.device(a.device)
    x_all = x_all.unsqueeze(1).to(dev)  # [N, 1, 28, 28]
    y_all = torch.from_numpy(labels.astype(np.int64)).to(dev)

    model = Cnn().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    amp_dtype = {"bf16": torch.bfloat16, "f16": torch.float16}.get(a.amp)
    scaler = torch.amp.GradScaler(dev.type, enabled=a.amp == "f16")
    best = 0.0
    for epoch in range(a.repeat):
        model.train()
        order = torch.randperm(len(y_all), device=dev)
        start = time.perf_counter()
        loss_sum = 0.0
        for i in range(0, len(order), a.batch_size):
            idx = order[i : i + a.batch_size]
            x, y = x_all[idx], y_all[idx]
            with torch.autocast(dev.type, dtype=amp_dtype, enabled=amp_dtype is not None):
                loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            loss_sum += loss.item() * len(idx)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        rate = len(order) / seconds
        best = max(best, rate)
        print(json.dumps({"framework": "pytorch", "torch": torch.__version__,
                          "device": a.device, "amp": a.amp, "batch_size": a.batch_size,
                          "threads": a.threads,
                          "items": len(order), "epoch": epoch + 1, "seconds": round(seconds, 2),
                          "images_per_s": round(rate, 1),
                          "train_loss": round(loss_sum / len(order), 4)}), flush=True)
    print(f"best: {best:.1f} images/s (batch {a.batch_size}, {a.threads} threads)")


if __name__ == "__main__":
    main()
