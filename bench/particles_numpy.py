#!/usr/bin/python3
"""Vectorized numpy twin of one RK4 step of `normlab particles` (docs/particles.md).

Same system as src/particles/dynamics.cpp: n tokens on S^{d-1}, state (Theta (n, d), r (n)),
    A_j = mean over heads of sum_k softmax_k(beta <Q theta_j, K theta_k>) V theta_k
    dtheta_j/dt = (A_j - <theta_j, A_j> theta_j) / s_j,   dr_j/dt per scheme,
classical RK4 steps, rows renormalized after every step, float64 throughout.

The default is the direct transcription of the formula (Q Theta, K Theta and V Theta as three
products). --precompute-qk uses M = Q^T K once, as the C++ code does, so the two can also be
compared algorithm for algorithm.

Prints one line: "numpy: STEPS rk4 steps in SECONDS s, RATE steps/s". Timing covers the step loop
only. With --save-inputs DIR it also writes its initial directions and Q, K, V in normlab's text
array format (DIR/init.txt, DIR/qkv.txt) and prints the mean pairwise cosine after the steps, so
`normlab particles --init file --qkv file` can be checked against the very same computation. Set OPENBLAS_NUM_THREADS=1 for a single-threaded comparison (bench/particles_bench.sh does).
Needs Debian's python3-numpy: run with /usr/bin/python3.
"""
import argparse
import math
import time

import numpy as np


def make_rhs(scheme, beta, heads, alpha, tau, precompute_qk):
    """Returns f(t, X, r) -> (dX, dr) for the scheme; heads is a list of (Q, K, V) or None."""
    if heads is not None and precompute_qk:
        heads = [(Q.T @ K, None, V) for (Q, K, V) in heads]

    def attention(X):
        if heads is None:  # Q = K = V = I
            L = beta * (X @ X.T)
            L -= L.max(axis=1, keepdims=True)
            W = np.exp(L)
            W /= W.sum(axis=1, keepdims=True)
            return W @ X
        A = np.zeros_like(X)
        for Q, K, V in heads:
            if precompute_qk:
                L = beta * ((X @ Q) @ X.T)  # Q holds M = Q^T K here
            else:
                L = beta * ((X @ Q.T) @ (X @ K.T).T)
            L -= L.max(axis=1, keepdims=True)
            W = np.exp(L)
            W /= W.sum(axis=1, keepdims=True)
            A += W @ (X @ V.T)
        return A / len(heads)

    def rhs(t, X, r):
        A = attention(X)
        dot = np.einsum("ij,ij->i", X, A)
        law = scheme
        if scheme == "mix":
            law = "post" if t <= tau else "pre"
        if law == "post":
            inv_s, dr = np.ones_like(r), np.zeros_like(r)
        elif law == "pre":
            inv_s, dr = 1.0 / r, dot
        elif law == "peri":
            norm = np.linalg.norm(A, axis=1)
            inv_s, dr = 1.0 / (r * norm), dot / norm
        elif law == "ngpt":
            inv_s, dr = alpha / np.linalg.norm(A, axis=1), np.zeros_like(r)
        elif law == "sqrt_scaling":
            inv_s, dr = np.full_like(r, 1.0 / math.sqrt(t + 1.0)), np.zeros_like(r)
        else:
            raise ValueError(law)
        return (A - dot[:, None] * X) * inv_s[:, None], dr

    return rhs


def rk4_step(rhs, t, X, r, h):
    k1x, k1r = rhs(t, X, r)
    k2x, k2r = rhs(t + h / 2, X + h / 2 * k1x, r + h / 2 * k1r)
    k3x, k3r = rhs(t + h / 2, X + h / 2 * k2x, r + h / 2 * k2r)
    k4x, k4r = rhs(t + h, X + h * k3x, r + h * k3r)
    X = X + h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
    r = r + h / 6 * (k1r + 2 * k2r + 2 * k3r + k4r)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, r


def write_array(path, shape, values):
    """normlab's text array format (docs/particles.md): a shape line, then rows of shape[-1]."""
    rows = np.asarray(values, dtype=np.float64).reshape(-1, shape[-1])
    with open(path, "w") as f:
        f.write("shape " + " ".join(str(s) for s in shape) + "\n")
        for row in rows:
            f.write(" ".join(repr(float(v)) for v in row) + "\n")


def mean_cos(X):
    G = X @ X.T
    n = X.shape[0]
    return (G.sum() - np.trace(G)) / (n * (n - 1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scheme", default="peri")
    p.add_argument("--n", type=int, default=256)
    p.add_argument("--d", type=int, default=512)
    p.add_argument("--beta", type=float, default=None, help="default sqrt(d)")
    p.add_argument("--qkv", choices=["kaiming", "identity"], default="kaiming")
    p.add_argument("--heads", type=int, default=1)
    p.add_argument("--dt", type=float, default=0.01)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--tau", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--precompute-qk", action="store_true")
    p.add_argument("--save-inputs", metavar="DIR", help="write init.txt and qkv.txt to DIR")
    a = p.parse_args()
    beta = a.beta if a.beta is not None else math.sqrt(a.d)
    rng = np.random.default_rng(a.seed)
    X = rng.standard_normal((a.n, a.d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    r = np.ones(a.n)
    heads = None
    if a.qkv == "kaiming":
        std = math.sqrt(2.0 / a.d)
        heads = [tuple(std * rng.standard_normal((a.d, a.d)) for _ in range(3))
                 for _ in range(a.heads)]
    rhs = make_rhs(a.scheme, beta, heads, a.alpha, a.tau, a.precompute_qk)
    if a.save_inputs:
        write_array(f"{a.save_inputs}/init.txt", (a.n, a.d), X)
        if heads is not None:
            write_array(f"{a.save_inputs}/qkv.txt", (a.heads, 3, a.d, a.d), np.stack(heads))
        t = 0.0
        for _ in range(a.steps):
            X, r = rk4_step(rhs, t, X, r, a.dt)
            t += a.dt
        print(f"numpy: mean cos after {a.steps} steps: {mean_cos(X):.15f}, mean radius {r.mean():.15f}")
        return
    X, r = rk4_step(rhs, 0.0, X, r, a.dt)  # warm-up, not timed
    t = a.dt
    start = time.perf_counter()
    for _ in range(a.steps):
        X, r = rk4_step(rhs, t, X, r, a.dt)
        t += a.dt
    seconds = time.perf_counter() - start
    assert np.all(np.isfinite(X))
    print(f"numpy: {a.steps} rk4 steps in {seconds:.3f} s, {a.steps / seconds:.1f} steps/s")


if __name__ == "__main__":
    main()
