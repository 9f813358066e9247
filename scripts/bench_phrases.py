"""Benchmark: a cold and a warm execution of the Phrases chapter.

    python scripts/bench_phrases.py [--profile smoke] [--warm-only]

Cold: a fresh, empty query cache (converted model checkpoints and data are
reused: they are one-time set-up, not the chapter's cost). Warm: the same
execution again on the cache the cold run filled. Reports wall times, their
ratio and the number of model calls each run made (the chapter glues it).
With --warm-only, times one execution on the current cache (e.g. after
`nox -s book`). Results go to bench/results/phrases-<profile>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from analysis.core import jsonio  # strict JSON: a missing number is null

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from execute_chapters import execute  # noqa: E402

from analysis.core.cache import QUERY_CACHE_ENV  # noqa: E402


def glued(notebook: Path, name: str) -> str | None:
    """A value the chapter glued, read back from the executed notebook."""
    nb = json.loads(notebook.read_text())
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            if out.get("metadata", {}).get("scrapbook", {}).get("name") == name:
                plain = [v for k, v in out["data"].items() if k.endswith("text/plain")]
                return "".join(plain[0]).strip("'\"")
    return None


def run(profile: str, out_dir: Path) -> dict:
    seconds = execute("phrases", {"profile": profile}, out_dir)
    return {"seconds": round(seconds, 1), "model_calls": glued(out_dir / "phrases.ipynb", "model_calls")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--profile", default="smoke", choices=["smoke", "default", "paper"])
    ap.add_argument("--warm-only", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        result = {"profile": args.profile}
        if not args.warm_only:
            os.environ[QUERY_CACHE_ENV] = str(tmp / "queries.sqlite")
            result["cold"] = run(args.profile, tmp / "cold")
        result["warm"] = run(args.profile, tmp / "warm")
    if "cold" in result:
        result["warm_over_cold"] = round(result["warm"]["seconds"] / result["cold"]["seconds"], 3)
    print(jsonio.dumps(result, indent=1))
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"phrases-{args.profile}.json").write_text(jsonio.dumps(result, indent=1))


if __name__ == "__main__":
    main()
