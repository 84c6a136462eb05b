#!/usr/bin/env python3
"""GPU peer benchmark: PyTorch trains the MLP of `distillrank bench train` with RankNet and Adam.

    python bench/peer_torch.py [--device cuda] [--steps 200] [--warmup 20] [--features 136]
                               [--groups 8] [--docs 64] [--widths 256,256,128,64]

Prints ONE JSON object: documents per second over the steps after the warm-up (forward, RankNet
loss over every pair with a higher grade, backward, Adam at 1e-3), on 16 fixed random batches of
`groups` x `docs` documents (features N(0, 1), grades 0..4), as `distillrank bench train` does.
Without PyTorch, or without the device, it prints {"skipped": "..."} and exits 0, so that the GPU
report can say why.
"""

import argparse
import json
import sys
import time


def emit(obj):
    json.dump(obj, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--features", type=int, default=136)
    parser.add_argument("--groups", type=int, default=8)
    parser.add_argument("--docs", type=int, default=64)
    parser.add_argument("--widths", default="256,256,128,64")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    try:
        import torch
    except ImportError:
        emit({"tool": "pytorch", "skipped": "PyTorch is not installed (pip install torch)"})
        return
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        emit({"tool": "pytorch", "torch_version": torch.__version__,
              "skipped": "PyTorch sees no CUDA device"})
        return
    device = torch.device(args.device)
    torch.manual_seed(args.seed)

    widths = [int(w) for w in args.widths.split(",")]
    layers = []
    fan_in = args.features
    for w in widths:
        layers += [torch.nn.Linear(fan_in, w), torch.nn.ReLU()]
        fan_in = w
    layers.append(torch.nn.Linear(fan_in, 1))
    model = torch.nn.Sequential(*layers).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)

    G, D = args.groups, args.docs
    gen = torch.Generator().manual_seed(args.seed)
    batches = [
        (torch.randn(G, D, args.features, generator=gen).to(device),
         torch.randint(0, 5, (G, D), generator=gen).to(device))
        for _ in range(16)
    ]

    def ranknet(scores, grades):
        # Pairs (i, j) of a group with grade_i > grade_j: ln(1 + exp(-(s_i - s_j))); mean over a
        # group's pairs, then over the groups that have pairs.
        diff = scores.unsqueeze(2) - scores.unsqueeze(1)
        pairs = (grades.unsqueeze(2) > grades.unsqueeze(1)).float()
        per_pair = torch.nn.functional.softplus(-diff) * pairs
        counts = pairs.sum(dim=(1, 2))
        has = counts > 0
        return (per_pair.sum(dim=(1, 2))[has] / counts[has]).mean()

    def step(s):
        x, g = batches[s % 16]
        optimizer.zero_grad(set_to_none=True)
        loss = ranknet(model(x).squeeze(-1), g)
        loss.backward()
        optimizer.step()
        return loss

    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    loss = None
    for s in range(args.warmup):
        loss = step(s)
    sync()
    t0 = time.perf_counter()
    for s in range(args.steps):
        loss = step(args.warmup + s)
    sync()
    seconds = time.perf_counter() - t0
    emit({
        "tool": "pytorch",
        "torch_version": torch.__version__,
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "docs_per_s": args.steps * G * D / seconds,
        "steps": args.steps,
        "batch_docs": G * D,
        "final_loss": float(loss.detach()) if loss is not None else None,
    })


if __name__ == "__main__":
    main()
