"""The served-model path against a real server: llama-cpp-python's
``llama_cpp.server`` running the book's two shipped GGUF models on 127.0.0.1.

    python scripts/served_check.py [--models gemma3-270m smollm2-135m-instruct] [--n 24]
                                   [--out bench/results/served.json]

For each model it:

1. starts ``python -m llama_cpp.server --model <gguf> --logits_all true`` on a free
   port (``--logits_all`` is what makes the server score prompt tokens);
2. probes it as every chapter does (:meth:`~analysis.models.served.ServedTokens.capabilities`);
3. scores ``--n`` windows of the book's popular texts (the local tokenizer's ids)
   through the server and through the local fp32 backend, and reports the largest
   and the median absolute log-probability difference, the share of positions whose
   top prediction agrees, and how many windows the server could not be sent (its
   tokenizer turns their text into other ids);
4. continues ``--n`` prompts for 16 tokens greedily both ways: the share of
   generated tokens that agree, position by position up to the first difference;
5. times both: scored tokens per second;
6. on the local model alone, measures what Min-K%++ from the top k costs against the
   exact moments over the vocabulary (``--topk-only`` runs just this, with no server).

llama.cpp computes in its quantized kernels and the local path dequantizes the same
weights to fp32, so the two are not expected to agree exactly; the figures say how
far apart they are. Each run uses query caches of its own (no answer is reused; the
converted local models come from the artifact cache).
Writes ``--out`` (JSON, through the book's writer).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from analysis.core import jsonio  # noqa: E402

WINDOW = 64
NEW_TOKENS = 16


_T0 = time.monotonic()


def log(message: str) -> None:
    print(f"[{time.monotonic() - _T0:6.0f} s] {message}", flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def llama_server(gguf: Path, port: int, threads: int, log: Path):
    """``llama_cpp.server`` on ``port``, up until the block ends."""
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--logits_all", "true",
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", str(threads),
           "--model_alias", gguf.stem]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited ({proc.returncode}); see {log}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"llama_cpp.server did not listen on {port} within 180 s; see {log}")
        yield proc
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    """Ask a server to stop; kill it if it has not within 20 seconds."""
    proc.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=20)
    if proc.poll() is None:
        proc.kill()


def windows(local, n: int, seed: int = 0) -> list[list[int]]:
    """``n`` windows of ``WINDOW`` token ids cut from the popular texts (seeded)."""
    from analysis.core import data
    texts = list(data.popular_texts().values())
    ids = [t for t in local.tokenize(texts) if len(t) > WINDOW]
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        seq = ids[k % len(ids)]
        start = int(rng.integers(0, len(seq) - WINDOW))
        out.append(seq[start:start + WINDOW])
    return out


def topk_error(name: str, n: int, ks=(5, 20, 100)) -> dict:
    """What Min-K%++ from the top k costs, on the local model alone: for ``n`` windows of
    the popular texts, the exact moments of log p over the whole vocabulary against those
    :func:`~analysis.models.served.topk_moments` computes from the top ``k`` (the tail left
    out, and spread evenly over the rest of the vocabulary), and the Min-K%++ score of each
    window both ways: the largest and median absolute difference of the window scores, and
    Spearman's rho between the exact and the approximate scores over windows."""
    import torch
    from scipy import stats

    from analysis.entropy.mia import min_k_plus_plus
    from analysis.models import load_model
    from analysis.models.served import topk_moments

    local = load_model(name)
    seqs = windows(local, n)
    hf = local.model
    vocab = int(hf.config.vocab_size)
    exact_scores, approx = [], {(k, mode): [] for k in ks for mode in ("left out", "spread")}
    for seq in seqs:
        ids = torch.tensor([local.id_prefix() + seq])
        with torch.inference_mode():
            logp = torch.log_softmax(hf(input_ids=ids).logits[0, :-1].float(), dim=-1)
        skip = len(local.id_prefix())
        logp, target = logp[skip:], ids[0, 1 + skip:]
        lp = logp.gather(1, target[:, None])[:, 0].numpy()
        p = logp.exp()
        mu = (p * logp).sum(-1).numpy()
        sigma = (p * (logp - torch.tensor(mu)[:, None]) ** 2).sum(-1).sqrt().numpy()
        exact_scores.append(min_k_plus_plus(lp, mu, sigma))
        for k in ks:
            top = torch.topk(logp, k, dim=-1).values.numpy()
            for mode, v in (("left out", None), ("spread", vocab)):
                m = np.array([topk_moments(row, v) for row in top])
                approx[(k, mode)].append(min_k_plus_plus(lp, m[:, 0], m[:, 1]))
    exact_scores = np.asarray(exact_scores)
    out = []
    for (k, mode), values in approx.items():
        d = np.abs(np.asarray(values) - exact_scores)
        out.append({"top_k": k, "tail": mode, "max_abs_diff": float(d.max()),
                    "median_abs_diff": float(np.median(d)),
                    "spearman": float(stats.spearmanr(exact_scores, values).statistic)})
    return {"model": name, "windows": len(seqs), "window_tokens": WINDOW, "vocab_size": vocab, "minkpp": out}


def check_model(name: str, n: int, threads: int, workdir: Path) -> dict:
    from analysis.core.cache import QueryCache
    from analysis.models import GenerationSettings, ModelError, load_model
    from analysis.models.api import OpenAIChatModel
    from analysis.models.checkpoints import _gguf_file

    local = load_model(name, cache=QueryCache(workdir / f"{name}-local.sqlite"))
    seqs = windows(local, n)
    port = free_port()
    with llama_server(_gguf_file(name), port, threads, workdir / f"{name}-server.log"):
        served = OpenAIChatModel(_gguf_file(name).stem, base_url=f"http://127.0.0.1:{port}/v1",
                                 cache=QueryCache(workdir / f"{name}-served.sqlite"), concurrency=1,
                                 timeout=600, max_retries=1)
        caps = served.capabilities()
        log(f"{name}: llama_cpp.server up on {port}; capabilities {caps.as_dict()}")
        t0 = time.perf_counter()
        ref = local.score_ids(seqs)
        t_local = time.perf_counter() - t0
        # one window at a time, so that a window the server cannot take is counted, not fatal
        got, refused, errors = [], 0, []
        t0 = time.perf_counter()
        for seq in seqs:
            try:
                got.append(served.score_ids([seq])[0])
            except ModelError as exc:
                got.append(None)
                refused += 1
                errors.append(str(exc)[:300])
        t_served = time.perf_counter() - t0
        diffs, agree, positions = [], 0, 0
        for r, g in zip(ref, got):
            if g is None:
                continue
            keep = np.isfinite(g["logprobs"])
            diffs.extend(np.abs(g["logprobs"][keep] - r["logprobs"][keep]).tolist())
            agree += int((g["argmax"][keep] == r["argmax"][keep]).sum())
            positions += int(keep.sum())
        prompts = [s[:WINDOW // 2] for s in seqs]
        settings = GenerationSettings(max_new_tokens=NEW_TOKENS)
        local_new = [a.meta["ids"] for a in local.generate_ids(prompts, settings)]
        log(f"{name}: {len(prompts)} local greedy continuations")
        same, total, gen_refused = 0, 0, 0
        log(f"{name}: scored {len(seqs)} windows both ways ({t_local:.1f} s local, {t_served:.1f} s served)")
        for p, mine in zip(prompts, local_new):
            [answer] = served.generate_ids([p], settings)
            if not answer.ok:  # a failed generation is an error answer, never compared
                gen_refused += 1
                errors.append(answer.error[-200:])
                continue
            theirs = answer.meta["ids"]
            first = next((k for k, (a, b) in enumerate(zip(mine, theirs)) if a != b), NEW_TOKENS)
            same += first
            total += NEW_TOKENS
    scored = sum(len(s) - 1 for s in seqs)
    return {
        "model": name, "gguf": _gguf_file(name).name, "capabilities": caps.as_dict(),
        "windows": len(seqs), "window_tokens": WINDOW, "refused_windows": refused,
        "max_logprob_diff": float(max(diffs)) if diffs else None,
        "median_logprob_diff": float(np.median(diffs)) if diffs else None,
        "argmax_agreement": agree / positions if positions else None,
        "greedy_agreement": same / total if total else None, "greedy_prompts": len(prompts),
        "greedy_refused": gen_refused, "new_tokens": NEW_TOKENS,
        # a server that refused every window scored nothing: no rate to give
        "tokens_per_s": {"local_fp32": scored / t_local,
                         "llama_cpp_server": scored / t_served if refused < len(seqs) else None},
        "errors": errors[:5],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["gemma3-270m", "smollm2-135m-instruct"])
    ap.add_argument("--n", type=int, default=24, help="windows scored and prompts continued per model")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "served.json")
    ap.add_argument("--topk-only", action="store_true",
                    help="measure only what Min-K%%++ from the top k costs (local models; no server)")
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error(f"--n must be a positive integer, got {args.n}")
    topk = [topk_error(m, args.n) for m in args.models]
    log("Min-K%++ from the top k measured")
    for t in topk:
        for row in t["minkpp"]:
            print(f"{t['model']}: Min-K%++ from the top {row['top_k']} (tail {row['tail']}): "
                  f"max |d| {row['max_abs_diff']:.3f}, median {row['median_abs_diff']:.3f}, "
                  f"rho {row['spearman']:.3f}")
    if args.topk_only:
        out = args.out.with_name("served_topk.json") if args.out.name == "served.json" else args.out
        jsonio.write(out, {"date": time.strftime("%Y-%m-%d"), "topk": topk})
        print(f"wrote {out}")
        return 0
    os.environ.setdefault("MEMBOOK_API_KEY", "no-key-needed")  # llama_cpp.server without --api_key
    import llama_cpp
    with tempfile.TemporaryDirectory(prefix="membook-served-") as tmp:
        results = []
        for m in args.models:
            results.append(check_model(m, args.n, args.threads, Path(tmp)))
            log(f"{m}: done")
    record = {"engine": f"llama-cpp-python {llama_cpp.__version__}", "threads": args.threads,
              "date": time.strftime("%Y-%m-%d"), "models": results, "topk": topk}
    for r in results:
        print(f"{r['model']}: max |dlogp| {r['max_logprob_diff']}, argmax agreement {r['argmax_agreement']}, "
              f"greedy agreement {r['greedy_agreement']}, refused {r['refused_windows']} of {r['windows']}, "
              f"tokens/s {r['tokens_per_s']}")
    jsonio.write(args.out, record)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
