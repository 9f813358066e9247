"""The engine as a lever: the phrases and size chapters' own requests answered by
llama.cpp's native server with parallel slots, against the book's batched fp32 path.

    python scripts/served_engine.py --llama-server PATH [--n 64] [--parallel 1 4]
                                    [--threads 2] [--out bench/results/served.json]

``PATH`` is a ``llama-server`` binary. It is not on PyPI; build it from the
llama.cpp sources that llama-cpp-python's sdist vendors (about 20 minutes on 2 cores)::

    pip download llama-cpp-python==0.3.36 --no-binary :all: --no-deps
    tar xzf llama_cpp_python-0.3.36.tar.gz
    cd llama_cpp_python-0.3.36/vendor/llama.cpp
    cmake -B build -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DCMAKE_BUILD_TYPE=Release
    cmake --build build --target llama-server -j2      # -> build/bin/llama-server

Workloads: the default profile's greedy requests, read from the book's query cache
(each with the answer the fp32 path gave the chapter): for each shipped model, the
phrases chapter's (64 new tokens) and the size chapter's next-word probes (6 new
tokens); ``--n`` of each, drawn with a fixed seed. Gemma 3 (base) continues raw
text (``/v1/completions``); SmolLM2-Instruct answers chat messages
(``/v1/chat/completions``, the GGUF's own template with ``--jinja``).

Arms, timed one after the other on the same prompts, each from nothing (no cache):

* ``local_fp32``: the book's path (``load_model(name).generate``, batched, fp32,
  dequantized from the same GGUF) with an empty query cache of its own;
* ``llama_server_p<k>``: ``llama-server --parallel k`` (continuous batching over
  ``k`` slots), sent ``k`` requests at a time.

For each arm: new tokens per second (every arm's answers tokenized by the local
tokenizer, so the count is the same rule for all), and its answers' agreement with
the fp32 answers in the book's cache: the share of identical answers, and of answers
with the same first word (the size chapter scores the first word). The result goes
into ``--out`` under ``"engine"``, beside what ``served_check.py`` wrote there.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

from served_check import free_port, log, stop  # noqa: E402

from analysis.core import jsonio  # noqa: E402

#: (model, request kind, new tokens, chapter): the workloads
WORKLOADS = (
    ("gemma3-270m", "complete", 64, "phrases"),
    ("gemma3-270m", "complete", 6, "size"),
    ("smollm2-135m-instruct", "chat", 64, "phrases"),
    ("smollm2-135m-instruct", "chat", 6, "size"),
)


def cached_requests(cache: Path, model: str, kind: str, new_tokens: int, n: int, seed: int = 0) -> list:
    """``n`` of the book's greedy ``kind`` requests to ``model`` for ``new_tokens`` tokens,
    drawn with ``seed``: (prompt, the fp32 answer the chapter got)."""
    con = sqlite3.connect(f"file:{cache}?mode=ro", uri=True)
    rows = con.execute("SELECT request, text FROM answers WHERE model LIKE ? AND kind = ? AND error IS NULL "
                       "ORDER BY key", (f"{model}@%|float32|cpu", kind)).fetchall()
    out = []
    for request, text in rows:
        r = json.loads(request)
        s = r["settings"]
        if s["max_new_tokens"] == new_tokens and s["temperature"] == 0:
            out.append((r["prompt"], text))
    if len(out) < n:
        raise SystemExit(f"the query cache holds {len(out)} {kind} requests to {model} for {new_tokens} "
                         f"tokens; --n asks for {n}: execute the phrases and size chapters first")
    pick = np.random.default_rng(seed).choice(len(out), n, replace=False)
    return [out[i] for i in sorted(pick)]


@contextlib.contextmanager
def native_server(binary: Path, gguf: Path, port: int, parallel: int, threads: int, log_file: Path):
    """``llama-server`` with ``parallel`` slots on ``port``, until the block ends."""
    import urllib.request
    cmd = [str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "--parallel",
           str(parallel), "--threads", str(threads), "--ctx-size", str(1024 * parallel), "--jinja",
           "--alias", gguf.stem, "--no-webui"]
    with open(log_file, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama-server exited ({proc.returncode}); see {log_file}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama-server was not healthy on {port} within 180 s; see {log_file}")
            time.sleep(0.5)
        yield proc
    finally:
        stop(proc)


def served_answers(port: int, alias: str, kind: str, prompts: list, new_tokens: int, parallel: int) -> list:
    """Each prompt answered greedily by the server, ``parallel`` requests in flight."""
    import openai
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="no-key-needed", timeout=600,
                           max_retries=0)

    def one(prompt):
        if kind == "chat":
            r = client.chat.completions.create(model=alias, messages=prompt, max_tokens=new_tokens,
                                               temperature=0.0, seed=0)
            return r.choices[0].message.content or ""
        r = client.completions.create(model=alias, prompt=prompt, max_tokens=new_tokens, temperature=0.0,
                                      seed=0)
        return r.choices[0].text or ""

    with ThreadPoolExecutor(parallel) as pool:
        return list(pool.map(one, prompts))


def first_word(text: str) -> str:
    from analysis.core.text import normalize_word
    words = text.split()
    return normalize_word(words[0]) if words else ""


def arm_row(name: str, seconds: float, answers: list, reference: list, tokens) -> dict:
    new = sum(len(t) for t in tokens(answers))
    return {"arm": name, "seconds": seconds, "new_tokens": new, "tokens_per_s": new / seconds,
            "answer_agreement": float(np.mean([a == r for a, r in zip(answers, reference)])),
            "first_word_agreement": float(np.mean([first_word(a) == first_word(r)
                                                   for a, r in zip(answers, reference)]))}


def workload(binary: Path, model: str, kind: str, new_tokens: int, chapter: str, n: int, parallel: list,
             threads: int, workdir: Path) -> dict:
    from analysis.core.artifacts import cache_dir
    from analysis.core.cache import QueryCache
    from analysis.models import GenerationSettings, load_model
    from analysis.models.checkpoints import _gguf_file

    pairs = cached_requests(cache_dir() / "queries.sqlite", model, kind, new_tokens, n)
    prompts, reference = [p for p, _ in pairs], [a for _, a in pairs]
    local = load_model(model, cache=QueryCache(workdir / f"{model}-{chapter}-local.sqlite"))
    tok = local.tokenizer

    def tokens(texts):
        return [tok(t, add_special_tokens=False)["input_ids"] for t in texts]

    settings = GenerationSettings(max_new_tokens=new_tokens)
    local.model  # loaded before the clock starts, as the server is before its first request
    t0 = time.perf_counter()
    got = [a.text for a in local.generate(prompts, settings, chat=kind == "chat")]
    arms = [arm_row("local_fp32", time.perf_counter() - t0, got, reference, tokens)]
    log(f"{model} {chapter}: local fp32 {arms[-1]['tokens_per_s']:.1f} tok/s, "
        f"{arms[-1]['answer_agreement']:.0%} identical to the cached answers")
    gguf = _gguf_file(model)
    for k in parallel:
        port = free_port()
        with native_server(binary, gguf, port, k, threads, workdir / f"{model}-p{k}.log"):
            t0 = time.perf_counter()
            got = served_answers(port, gguf.stem, kind, prompts, new_tokens, k)
            arms.append(arm_row(f"llama_server_p{k}", time.perf_counter() - t0, got, reference, tokens))
        a = arms[-1]
        log(f"{model} {chapter}: llama-server -np {k} {a['tokens_per_s']:.1f} tok/s, "
            f"{a['answer_agreement']:.0%} identical, {a['first_word_agreement']:.0%} same first word")
    return {"model": model, "chapter": chapter, "kind": kind, "new_tokens_per_answer": new_tokens,
            "prompts": n, "arms": arms}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llama-server", type=Path, required=True, help="a llama-server binary")
    ap.add_argument("--n", type=int, default=64, help="prompts per workload")
    ap.add_argument("--parallel", type=int, nargs="+", default=[1, 4], help="slot counts to time")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "served.json")
    args = ap.parse_args(argv)
    if not args.llama_server.is_file() or not os.access(args.llama_server, os.X_OK):
        ap.error(f"--llama-server must be an executable llama-server binary, got {args.llama_server}")
    if args.n < 1 or any(k < 1 for k in args.parallel):
        ap.error(f"--n and --parallel must be positive integers, got {args.n} and {args.parallel}")
    version = subprocess.run([str(args.llama_server), "--version"], capture_output=True, text=True)
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="served-engine-"))  # kept: the query caches back up at exit
    for model, kind, new_tokens, chapter in WORKLOADS:
        rows.append(workload(args.llama_server, model, kind, new_tokens, chapter, args.n, args.parallel,
                             args.threads, tmp))
    record = jsonio.loads(args.out.read_text()) if args.out.exists() else {}
    record["engine"] = {"date": time.strftime("%Y-%m-%d"), "threads": args.threads,
                        "llama_server": (version.stdout + version.stderr).strip().splitlines()[:2],
                        "workloads": rows}
    jsonio.write(args.out, record)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
