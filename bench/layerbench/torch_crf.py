"""The PyTorch reference of `simdcrf-bench layer`: a standard batched CRF layer
(pytorch-crf's algorithm, batch-first: a Python loop over time steps with a
(B,M,M) broadcast and logsumexp or max per step, the gradient by autograd),
timed on the scores the Go side wrote.

Usage: python3 torch_crf.py SPEC.json. The spec names the data directory, the
cases and the repetitions; one JSON line per case goes to stdout, and the
results of threads=1 runs are written next to the data for the agreement
check."""
import json
import statistics
import sys
import time

import numpy as np
import torch


def load(d, name, dtype, shape):
    return np.fromfile(f"{d}/{name}", dtype=dtype).reshape(shape)


def nll(em, tags, lengths, mask, trans, start, end):
    """Per-sequence -log p(tags | em)."""
    B, T, M = em.shape
    idx = torch.arange(B)
    maskf = mask.to(em.dtype)
    score = start[tags[:, 0]] + em[idx, 0, tags[:, 0]]
    for t in range(1, T):
        score = score + (trans[tags[:, t - 1], tags[:, t]] + em[idx, t, tags[:, t]]) * maskf[:, t]
    last = tags.gather(1, (lengths - 1).unsqueeze(1)).squeeze(1)
    score = score + end[last]
    return log_z(em, mask, trans, start, end) - score


def log_z(em, mask, trans, start, end):
    B, T, M = em.shape
    alpha = start + em[:, 0]
    for t in range(1, T):
        nxt = torch.logsumexp(alpha.unsqueeze(2) + trans + em[:, t].unsqueeze(1), dim=1)
        alpha = torch.where(mask[:, t].unsqueeze(1), nxt, alpha)
    return torch.logsumexp(alpha + end, dim=1)


def viterbi(em, lengths, mask, trans, start, end):
    """Best paths as a (B,T) tensor (-1 beyond each length) and their scores."""
    B, T, M = em.shape
    score = start + em[:, 0]
    hist = []
    for t in range(1, T):
        nxt, arg = (score.unsqueeze(2) + trans + em[:, t].unsqueeze(1)).max(dim=1)
        score = torch.where(mask[:, t].unsqueeze(1), nxt, score)
        hist.append(arg)
    best, last = (score + end).max(dim=1)
    paths = torch.full((B, T), -1, dtype=torch.long)
    cur = last
    for t in range(T - 1, -1, -1):
        if t < T - 1:
            prev = hist[t].gather(1, cur.unsqueeze(1)).squeeze(1)
            cur = torch.where(t < lengths - 1, prev, cur)
        cur = torch.where(lengths - 1 == t, last, cur)
        paths[:, t] = torch.where(t < lengths, cur, -1)
    return paths, best


def timeit(f, warmup, reps, min_time):
    """Median seconds of f after warmup calls: at least reps calls and
    min_time, except that calls slower than a second (two threads on a
    loaded machine) stop after 3 calls and 10 s."""
    for i in range(warmup):
        a = time.perf_counter()
        f()
        if time.perf_counter() - a > 1:
            break
    ts = []
    t0 = time.perf_counter()
    while len(ts) < reps or (time.perf_counter() - t0 < min_time and len(ts) < 1000):
        a = time.perf_counter()
        f()
        ts.append(time.perf_counter() - a)
        if len(ts) >= 3 and time.perf_counter() - t0 > 10 and statistics.median(ts) > 1:
            break
    return statistics.median(ts) * 1e3, len(ts)


def main():
    spec = json.load(open(sys.argv[1]))
    d = spec["dir"]
    B, T = spec["B"], spec["T"]
    torch.set_num_interop_threads(1)
    lengths = torch.from_numpy(load(d, "lengths.i32", np.int32, (B,)).astype(np.int64))
    mask = torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)
    for case in spec["cases"]:
        M, dt, threads = case["M"], case["dtype"], case["threads"]
        torch.set_num_threads(threads)
        dtype = torch.float32 if dt == "float32" else torch.float64
        em0 = torch.from_numpy(load(d, f"em{M}.f64", np.float64, (B, T, M))).to(dtype)
        tr0 = torch.from_numpy(load(d, f"trans{M}.f64", np.float64, (M, M))).to(dtype)
        st0 = torch.from_numpy(load(d, f"start{M}.f64", np.float64, (M,))).to(dtype)
        en0 = torch.from_numpy(load(d, f"end{M}.f64", np.float64, (M,))).to(dtype)
        tags = torch.from_numpy(load(d, f"tags{M}.i32", np.int32, (B, T)).astype(np.int64))
        em = em0.clone().requires_grad_(True)
        tr = tr0.clone().requires_grad_(True)
        st = st0.clone().requires_grad_(True)
        en = en0.clone().requires_grad_(True)
        out = {}

        def train_step():
            for p in (em, tr, st, en):
                p.grad = None
            per = nll(em, tags, lengths, mask, tr, st, en)
            per.sum().backward()
            out["nll"] = per

        def decode():
            with torch.no_grad():
                out["paths"], out["scores"] = viterbi(em0, lengths, mask, tr0, st0, en0)

        def marginals():
            e = em0.clone().requires_grad_(True)
            z = log_z(e, mask, tr0, st0, en0)
            (g,) = torch.autograd.grad(z.sum(), e)
            out["marg"], out["logz"] = g, z

        res = dict(case)
        for name, f in (("nll_grad", train_step), ("decode", decode), ("marginals", marginals)):
            ms, n = timeit(f, spec["warmup"], spec["reps"], spec["min_time"])
            res[name + "_ms"] = ms
            res[name + "_reps"] = n
        if case.get("write"):
            p = f"{d}/torch_{M}_{dt}_"
            out["nll"].detach().to(torch.float64).numpy().tofile(p + "nll.f64")
            em.grad.to(torch.float64).numpy().tofile(p + "gem.f64")
            tr.grad.to(torch.float64).numpy().tofile(p + "gtrans.f64")
            st.grad.to(torch.float64).numpy().tofile(p + "gstart.f64")
            en.grad.to(torch.float64).numpy().tofile(p + "gend.f64")
            out["paths"].to(torch.int32).numpy().tofile(p + "paths.i32")
            out["scores"].to(torch.float64).numpy().tofile(p + "scores.f64")
            out["marg"].to(torch.float64).numpy().tofile(p + "marg.f64")
            out["logz"].detach().to(torch.float64).numpy().tofile(p + "logz.f64")
        res["torch"] = torch.__version__
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
