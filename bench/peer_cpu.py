#!/usr/bin/env python3
"""CPU peer benchmark: the Python tools we compare `distillrank bench` against.

Each subcommand prints exactly ONE JSON object on stdout (nothing else), so the
output can be piped into a script that computes the Rust/peer ratios.

    python bench/peer_cpu.py parse FILE [--query QUERYFILE] [--repeat 3]
        Time sklearn.datasets.load_svmlight_file (SVMlight / LETOR text parsing).

    python bench/peer_cpu.py sgemm [--repeat 20]
        numpy float32 matrix-multiply throughput (GFLOP/s) for the shapes of
        our MLP's forward pass with a batch of 512 documents.

    python bench/peer_cpu.py train [--steps 200] [--warmup 20] ...
        JAX (CPU) training throughput of the same MLP with RankNet loss and Adam,
        in documents per second.

Dependencies: pip install numpy scikit-learn jax
"""

import argparse
import json
import os
import sys
import time


def emit(obj):
    """Print one JSON object on stdout (the only thing a subcommand prints)."""
    json.dump(obj, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()


# --------------------------------------------------------------------------
# parse
# --------------------------------------------------------------------------


def cmd_parse(args):
    import numpy as np
    from sklearn.datasets import load_svmlight_file

    path = args.file
    n_bytes = os.path.getsize(path)
    if args.query:
        n_bytes += os.path.getsize(args.query)

    def load_once():
        if args.query:
            # Groups come from a separate file (one group size per line, the
            # LightGBM ".query" convention), so the qid column is not needed.
            X, y = load_svmlight_file(path)
            groups = np.loadtxt(args.query, dtype=np.int64, ndmin=1)
            return X, y, groups
        # Groups come from the "qid:" column of the file itself.
        return load_svmlight_file(path, query_id=True)

    best = float("inf")
    docs = 0
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        result = load_once()
        elapsed = time.perf_counter() - t0
        best = min(best, elapsed)
        docs = result[0].shape[0]  # number of rows = documents
        del result

    emit(
        {
            "tool": "sklearn.load_svmlight_file",
            "file": path,
            "bytes": n_bytes,
            "seconds": best,
            "mb_per_s": n_bytes / 1e6 / best,
            "docs": docs,
        }
    )


# --------------------------------------------------------------------------
# sgemm
# --------------------------------------------------------------------------

# (m, k, n): an [m, k] x [k, n] product. The first four are the forward
# products of our MLP (136 -> 256 -> 256 -> 128 -> 64) with 512 documents;
# the last one is a plain square reference.
SGEMM_SHAPES = [
    (512, 136, 256),
    (512, 256, 256),
    (512, 256, 128),
    (512, 128, 64),
    (1024, 1024, 1024),
]


def blas_info():
    """Describe the BLAS numpy uses, or return None if we cannot tell."""
    # threadpoolctl inspects the libraries actually loaded in this process.
    try:
        import numpy as np  # noqa: F401  (makes sure numpy's BLAS is loaded)
        from threadpoolctl import threadpool_info

        libs = [
            {
                "internal_api": lib.get("internal_api"),
                "version": lib.get("version"),
                "threading_layer": lib.get("threading_layer"),
                "num_threads": lib.get("num_threads"),
            }
            for lib in threadpool_info()
            if lib.get("user_api") == "blas"
        ]
        if libs:
            return libs
    except Exception:
        pass
    # Fallback: numpy's own build configuration (numpy >= 1.26).
    try:
        import numpy as np

        config = np.show_config(mode="dicts")
        blas = config.get("Build Dependencies", {}).get("blas")
        if blas:
            return blas
    except Exception:
        pass
    return None


def cmd_sgemm(args):
    import numpy as np

    rng = np.random.default_rng(0)
    shapes = []
    for m, k, n in SGEMM_SHAPES:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        out = np.empty((m, n), dtype=np.float32)

        # Warm up: first calls pay for thread start-up and cache misses.
        for _ in range(3):
            np.matmul(a, b, out=out)

        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            np.matmul(a, b, out=out)
            best = min(best, time.perf_counter() - t0)

        flops = 2.0 * m * n * k  # one multiply + one add per inner-product term
        shapes.append({"m": m, "k": k, "n": n, "gflops": flops / best / 1e9})

    emit(
        {
            "tool": "numpy",
            "numpy_version": np.__version__,
            "blas": blas_info(),
            "shapes": shapes,
        }
    )


# --------------------------------------------------------------------------
# train
# --------------------------------------------------------------------------


def cmd_train(args):
    # Must be set before jax is imported: run on the CPU even if a GPU exists.
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import jax.numpy as jnp
    import numpy as np

    G, D, F = args.groups_per_batch, args.docs_per_group, args.features
    widths = [int(w) for w in args.widths.split(",") if w]
    sizes = [F] + widths + [1]  # layer sizes, input to output score

    # ---- model: MLP with ReLU on hidden layers, He-uniform init, zero bias.
    def init_params(key):
        params = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            key, sub = jax.random.split(key)
            limit = np.sqrt(6.0 / fan_in)  # He-uniform bound
            w = jax.random.uniform(
                sub, (fan_in, fan_out), jnp.float32, minval=-limit, maxval=limit
            )
            b = jnp.zeros((fan_out,), jnp.float32)
            params.append((w, b))
        return params

    def forward(params, x):
        # x: [..., F] -> scores [...]
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:  # no activation on the output layer
                h = jax.nn.relu(h)
        return h[..., 0]

    # ---- RankNet loss.
    def ranknet_loss(params, x, grades):
        f = forward(params, x)  # [G, D]
        # diff[g, i, j] = f_i - f_j; a pair (i, j) counts when grade_i > grade_j.
        diff = f[:, :, None] - f[:, None, :]
        pair = (grades[:, :, None] > grades[:, None, :]).astype(jnp.float32)
        pair_loss = jax.nn.softplus(-diff) * pair  # log(1 + exp(-(f_i - f_j)))
        n_pairs = pair.sum(axis=(1, 2))  # [G]
        has_pairs = n_pairs > 0
        # Mean over the pairs of each group (0 for a group without pairs)...
        group_loss = pair_loss.sum(axis=(1, 2)) / jnp.maximum(n_pairs, 1.0)
        # ...then mean over the groups that have at least one pair.
        n_groups = jnp.maximum(has_pairs.sum(), 1)
        return jnp.where(has_pairs, group_loss, 0.0).sum() / n_groups

    # ---- Adam, written out by hand (with bias correction).
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8

    def adam_init(params):
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        return {"t": jnp.zeros((), jnp.float32), "m": zeros, "v": zeros}

    def adam_update(params, grads, state):
        t = state["t"] + 1.0
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
        m_corr = 1.0 - b1**t  # bias corrections
        v_corr = 1.0 - b2**t
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - lr * (m / m_corr) / (jnp.sqrt(v / v_corr) + eps),
            params,
            m,
            v,
        )
        return params, {"t": t, "m": m, "v": v}

    # ---- one full training step (forward + backward + Adam) as one jit.
    @jax.jit
    def train_step(params, opt_state, x, grades):
        loss, grads = jax.value_and_grad(ranknet_loss)(params, x, grades)
        params, opt_state = adam_update(params, grads, opt_state)
        return params, opt_state, loss

    # ---- data: a few distinct random batches, moved to the device once.
    n_batches = 16
    rng = np.random.default_rng(args.seed)
    batches = [
        (
            jax.device_put(rng.standard_normal((G, D, F), dtype=np.float32)),
            jax.device_put(rng.integers(0, 5, size=(G, D)).astype(np.int32)),
        )
        for _ in range(n_batches)
    ]

    params = init_params(jax.random.PRNGKey(args.seed))
    opt_state = adam_init(params)

    # Warm-up steps include the jit compilation.
    loss = None
    for s in range(args.warmup):
        x, g = batches[s % n_batches]
        params, opt_state, loss = train_step(params, opt_state, x, g)
    jax.block_until_ready((params, opt_state, loss))

    t0 = time.perf_counter()
    for s in range(args.steps):
        x, g = batches[(args.warmup + s) % n_batches]
        params, opt_state, loss = train_step(params, opt_state, x, g)
    jax.block_until_ready((params, opt_state, loss))
    seconds = time.perf_counter() - t0

    emit(
        {
            "tool": "jax",
            "jax_version": jax.__version__,
            "docs_per_s": args.steps * G * D / seconds,
            "steps": args.steps,
            "batch_docs": G * D,
            "final_loss": float(loss) if loss is not None else None,
        }
    )


# --------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("parse", help="time sklearn.load_svmlight_file")
    p.add_argument("file", help="SVMlight/LETOR text file")
    p.add_argument(
        "--query",
        metavar="QUERYFILE",
        help="optional group-size file (one size per line); "
        "if given, the qid column is not parsed and its bytes are counted too",
    )
    p.add_argument("--repeat", type=int, default=3, help="best of N runs")
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser("sgemm", help="numpy float32 matmul GFLOP/s")
    p.add_argument("--repeat", type=int, default=20, help="best of N runs")
    p.set_defaults(func=cmd_sgemm)

    p = sub.add_parser("train", help="JAX CPU RankNet training throughput")
    p.add_argument("--steps", type=int, default=200, help="timed steps")
    p.add_argument("--warmup", type=int, default=20, help="untimed steps first")
    p.add_argument("--features", type=int, default=136)
    p.add_argument("--groups-per-batch", type=int, default=8)
    p.add_argument("--docs-per-group", type=int, default=64)
    p.add_argument("--widths", default="256,256,128,64", help="hidden layer widths")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_train)

    args = parser.parse_args()
    if getattr(args, "repeat", 1) < 1 or getattr(args, "steps", 1) < 1:
        parser.error("--repeat and --steps must be at least 1")
    args.func(args)


if __name__ == "__main__":
    main()
