"""Benchmark: API-model throughput against the fake OpenAI server at several concurrencies.

    python scripts/bench_api.py [--latency 0.05] [--levels 1 8 32] [--n 400] [--n-serial 100]
                                [--repeat 3] [--server process|thread]

For each concurrency level ``c``, starts a fresh :class:`FakeOpenAIServer`
(tests/fakeserver.py) that answers every request after ``--latency`` seconds,
and sends distinct prompts (``--n-serial`` at ``c = 1``, ``--n`` otherwise)
through ``load_model("api:...", concurrency=c).generate`` with a fresh, empty
query cache, so every prompt is a real request and every answer is written
to sqlite as it arrives, as in a chapter. Reports, per level: requests,
seconds, requests per second, the ideal ``c / latency``, their ratio, and the
peak number of requests the server saw in flight at once. Each level runs
``--repeat`` times (each time with a fresh server, cache and prompts) and
reports its fastest run, as the other benchmarks report their best time.

With ``--server process`` (the default) the server runs in a child process,
so its request handling does not compete with the client for this process's
GIL; ``--server thread`` runs it in a thread of this process (as the tests do)
and measures both halves together. Results go to bench/results/api.json.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from analysis.core import jsonio  # strict JSON: a missing number is null

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the fake server lives with the tests

from analysis.core.cache import QueryCache  # noqa: E402
from analysis.models import load_model  # noqa: E402
from fakeserver import FakeOpenAIServer  # noqa: E402

OUT = ROOT / "bench" / "results"
KEY = "sk-membook-bench"
MODEL = "api:bench-model"


def _serve(latency: float, conn) -> None:
    """Child process: run a fake server until told to stop; report its peak in flight."""
    with FakeOpenAIServer(api_key=KEY, delay=latency) as server:
        conn.send(server.base_url)
        conn.recv()  # "stop"
        conn.send((server.count(), server.max_in_flight))


class Server:
    """A fresh fake server, in a child process or a thread of this one."""

    def __init__(self, latency: float, where: str):
        self.where = where
        if where == "process":
            self._conn, child = mp.get_context("spawn").Pipe()
            self._proc = mp.get_context("spawn").Process(target=_serve, args=(latency, child))
            self._proc.start()
            self.base_url = self._conn.recv()
        else:
            self._server = FakeOpenAIServer(api_key=KEY, delay=latency).start()
            self.base_url = self._server.base_url

    def stop(self) -> tuple[int, int]:
        """Stop the server; return (requests received, peak requests in flight)."""
        if self.where == "process":
            self._conn.send("stop")
            stats = self._conn.recv()
            self._proc.join()
            return stats
        stats = self._server.count(), self._server.max_in_flight
        self._server.stop()
        return stats


def measure(c: int, n: int, latency: float, where: str, tmp: Path, run: int = 0) -> dict:
    """Send ``n`` distinct prompts at concurrency ``c`` through a fresh cache; time it."""
    server = Server(latency, where)
    try:
        cache = QueryCache(tmp / f"queries-c{c}-run{run}.sqlite")
        model = load_model(MODEL, base_url=server.base_url, cache=cache, concurrency=c)
        prompts = [f"bench c={c} run {run} prompt {i}" for i in range(n)]
        t0 = time.perf_counter()
        answers = model.generate(prompts)
        seconds = time.perf_counter() - t0
        model.close()
        cache.close()
    finally:
        received, peak = server.stop()
    bad = sum(not a.ok or a.cached for a in answers)
    if bad or received != n:
        raise SystemExit(f"c={c}: {bad} failed or cached answers, {received} requests for {n} prompts")
    rate, ideal = n / seconds, c / latency
    return {
        "concurrency": c,
        "requests": n,
        "seconds": round(seconds, 3),
        "requests_per_s": round(rate, 1),
        "ideal_per_s": round(ideal, 1),
        "ratio": round(rate / ideal, 3),
        "peak_in_flight": peak,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.05, help="seconds the server waits per request")
    ap.add_argument("--levels", type=int, nargs="+", default=[1, 8, 32], help="concurrency levels")
    ap.add_argument("--n", type=int, default=400, help="requests at each concurrency above 1")
    ap.add_argument("--n-serial", type=int, default=100, help="requests at concurrency 1")
    ap.add_argument("--repeat", type=int, default=3, help="runs per level; the fastest is reported")
    ap.add_argument("--server", choices=["process", "thread"], default="process",
                    help="run the fake server in a child process (default) or a thread of this one")
    args = ap.parse_args()

    os.environ["MEMBOOK_API_KEY"] = KEY  # the fake server's key; the first one the client reads
    results = {
        "latency_s": args.latency,
        "server": args.server,
        "cpus": os.cpu_count(),
        "machine": platform.processor() or platform.machine(),
        "levels": [],
    }
    print(f"fake server latency {args.latency * 1000:.0f} ms, server in a {args.server}, "
          f"{os.cpu_count()} CPUs, fastest of {args.repeat} runs")
    print(f"{'conc':>5} {'requests':>8} {'seconds':>8} {'req/s':>8} {'ideal/s':>8} {'ratio':>6} {'peak':>5}")
    with tempfile.TemporaryDirectory() as tmp:
        for c in args.levels:
            n = args.n_serial if c == 1 else args.n
            runs = [measure(c, n, args.latency, args.server, Path(tmp), run) for run in range(args.repeat)]
            row = max(runs, key=lambda r: r["requests_per_s"])
            results["levels"].append({**row, "runs_per_s": [r["requests_per_s"] for r in runs]})
            print(f"{c:5d} {n:8d} {row['seconds']:8.2f} {row['requests_per_s']:8.1f} "
                  f"{row['ideal_per_s']:8.1f} {row['ratio']:6.2f} {row['peak_in_flight']:5d}", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "api.json").write_text(jsonio.dumps(results, indent=1))


if __name__ == "__main__":
    main()
