"""Execute the chapter notebooks with papermill into book/chapters/.

    python scripts/execute_chapters.py --profile default [--chapters phrases ...] [-p key=value ...]

Each MyST source in notebooks/ is converted with jupytext, executed with
papermill (parameters injected after its `parameters` cell) and written to
book/chapters/<name>.ipynb, where the book build (execute_notebooks: off)
picks it up. A failing cell fails the run. Wall times go to
book/chapters/_timings.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jupytext
import papermill as pm

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "notebooks"
OUT = ROOT / "book" / "chapters"
PROFILES = ("smoke", "default", "paper")


def chapters() -> list[str]:
    """Every chapter source, in the book's order (``_toc.yml``), so the lab page runs
    before the chapters that use its models; sources not in the table of contents
    come last, alphabetically."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    listed = [Path(entry["file"]).name for entry in toc.get("chapters", [])]
    names = {p.stem for p in SOURCES.glob("*.md")}
    return [n for n in listed if n in names] + sorted(names - set(listed))


def execute(name: str, parameters: dict, out_dir: Path = OUT) -> float:
    """Execute one chapter; return its wall time in seconds."""
    out_dir.mkdir(parents=True, exist_ok=True)
    raw = out_dir / f"{name}.src.ipynb"
    jupytext.write(jupytext.read(SOURCES / f"{name}.md"), raw)
    t0 = time.time()
    try:
        pm.execute_notebook(
            str(raw),
            str(out_dir / f"{name}.ipynb"),
            parameters=parameters,
            kernel_name="python3",
            cwd=str(ROOT),
            progress_bar=False,
            log_output=True,
        )
    finally:
        raw.unlink(missing_ok=True)
    return time.time() - t0


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default", choices=PROFILES)
    ap.add_argument("--chapters", nargs="*", default=None, help=f"default: all of {chapters()}")
    ap.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra parameter for every chapter (JSON value or string)",
    )
    args = ap.parse_args(argv)
    names = args.chapters or chapters()
    unknown = sorted(set(names) - set(chapters()))
    if unknown:
        ap.error(f"unknown chapters {unknown}; allowed: {chapters()}")
    params = {"profile": args.profile}
    for item in args.param:
        key, _, value = item.partition("=")
        params[key] = _value(value)
    timings_file = OUT / "_timings.json"
    timings = json.loads(timings_file.read_text()) if timings_file.exists() else {}
    for name in names:
        seconds = execute(name, params)
        timings[name] = {"profile": args.profile, "seconds": round(seconds, 1), "params": params}
        OUT.mkdir(parents=True, exist_ok=True)
        timings_file.write_text(json.dumps(timings, indent=1))
        print(f"{name}: {seconds:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
