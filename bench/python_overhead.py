#!/usr/bin/python3
"""Overhead of calling normlab from Python (docs/python.md, docs/performance.md).

Times model.forward(tokens) from Python against the same forward timed inside C++, on the
minimal model of the post-norm paper (V = 17, D = 15, one layer, one head, no MLP) and a small
one, one thread; prints microseconds per call and the ratio Python / C++ (target: at most 2 on
the minimal model). Then the forward hooks' costs (docs/python.md, "Hooks"): run_with_hooks with
no function (every site asks Python whether it is wanted, once per name), with one identity
hook on the first attention's z, and run_with_cache (every activation copied). Without hooks
the C++ forward pays one null test per site: compare cpp_us between builds of two commits, run
alternately (docs/performance.md, "Python"). Run with PYTHONPATH=build/python.
"""

import argparse
import json
import time

import numpy as np

import normlab

MODELS = {
    "minimal": dict(scheme="post", vocab=17, width=15, heads=1, layers=1, mlp=False,
                    final_norm=False, seq_len=9),
    "small": dict(scheme="pre", vocab=64, width=128, heads=4, layers=4, pos="rope",
                  seq_len=64),
}


def seconds_per_call(call, calls: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    normlab.set_threads(1)
    rows = []
    for name, options in MODELS.items():
        options = dict(options)
        seq_len = options.pop("seq_len")
        model = normlab.init(seed=1, **options)
        tokens = np.random.default_rng(0).integers(0, options["vocab"], size=(1, seq_len),
                                                   dtype=np.int32)
        calls = args.calls if name == "minimal" else max(args.calls // 50, 10)
        model.forward(tokens)  # workspace sized once
        cpp = model._core.time_forward_in_cpp(tokens, calls, args.repeats)
        py = seconds_per_call(lambda: model.forward(tokens), calls, args.repeats)
        hooked = [("blocks.0.attn.hook_z", lambda x, hook: None)]
        no_fn = seconds_per_call(lambda: model.run_with_hooks(tokens, []), calls, args.repeats)
        one = seconds_per_call(lambda: model.run_with_hooks(tokens, hooked), calls, args.repeats)
        cache = seconds_per_call(lambda: model.run_with_cache(tokens), calls, args.repeats)
        rows.append({"model": name, "seq_len": seq_len, "cpp_us": cpp * 1e6,
                     "python_us": py * 1e6, "ratio": py / cpp, "hooks_none_us": no_fn * 1e6,
                     "hook_one_us": one * 1e6, "cache_us": cache * 1e6})
    if args.json:
        print(json.dumps(rows))
        return
    print(f"{'model':>8} {'T':>4} {'C++ us/call':>12} {'Python us/call':>15} {'ratio':>6} "
          f"{'no hook fn':>11} {'one hook':>9} {'cache':>9}")
    for r in rows:
        print(f"{r['model']:>8} {r['seq_len']:>4} {r['cpp_us']:>12.2f} {r['python_us']:>15.2f} "
              f"{r['ratio']:>6.2f} {r['hooks_none_us']:>11.2f} {r['hook_one_us']:>9.2f} "
              f"{r['cache_us']:>9.2f}")


if __name__ == "__main__":
    main()
