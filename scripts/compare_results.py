"""Compare the glued values of two sets of ``results/<chapter>.json``, ignoring
sentence wording: every value that is a number, a percentage, a short label or a
table must be equal; a sentence (five words or more) is compared by the numbers
it contains, and only reported.

    python scripts/compare_results.py --before REV [--after DIR] [--chapters a b] [--exact]

With ``--exact`` a sentence must match word for word (for a change that moves
wording, such as a sentence moved into a template file, and should change nothing).

``--before`` is a git revision (its committed ``results/``) or a folder; ``--after``
defaults to this checkout's ``results/``. Exits non-zero when a value differs or
goes missing.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMBER = re.compile(r"[-+−]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?%?")
WORDS = re.compile(r"[A-Za-z]{2,}")


def is_sentence(value) -> bool:
    return isinstance(value, str) and len(WORDS.findall(value)) >= 5


def numbers(text: str) -> list[str]:
    return [n.replace("−", "-").replace(",", "") for n in NUMBER.findall(text)]


def load(where: str, chapter: str) -> dict | None:
    path = Path(where)
    if path.is_dir():
        file = path / f"{chapter}.json"
        return json.loads(file.read_text()) if file.exists() else None
    out = subprocess.run(["git", "show", f"{where}:results/{chapter}.json"], cwd=ROOT,
                         capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else None


def compare(before: dict, after: dict, exact: bool = False) -> tuple[list[str], list[str], int, int]:
    """(differences, sentence notes, values compared, sentences compared); with
    ``exact``, a sentence whose wording differs at all is a difference."""
    diffs, notes, n_values, n_sentences = [], [], 0, 0
    for key, old in sorted(before.items()):
        if key not in after:
            diffs.append(f"{key}: missing after (was {str(old)[:80]!r})")
            continue
        new = after[key]
        if is_sentence(old) or is_sentence(new):
            n_sentences += 1
            if exact and old != new:
                diffs.append(f"{key}: {first_change(str(old), str(new))}")
            elif numbers(str(old)) != numbers(str(new)):
                notes.append(f"{key}: numbers {numbers(str(old))[:8]} -> {numbers(str(new))[:8]}")
            continue
        n_values += 1
        if old != new:
            diffs.append(f"{key}: {str(old)[:80]!r} -> {str(new)[:80]!r}")
    return diffs, notes, n_values, n_sentences


def first_change(old: str, new: str, context: int = 40) -> str:
    """Where two texts first differ, with ``context`` characters around it."""
    i = next((k for k, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    lo = max(0, i - context)
    return f"at {i}: {old[lo:i + context]!r} -> {new[lo:i + context]!r}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="a git revision or a folder of results")
    ap.add_argument("--after", default=str(ROOT / "results"), help="a folder of results")
    ap.add_argument("--chapters", nargs="*",
                    default=["lab", "phrases", "size", "entropy", "predicting", "distributional"])
    ap.add_argument("--exact", action="store_true",
                    help="compare sentences word for word, not only by their numbers")
    args = ap.parse_args(argv)
    failed = False
    for chapter in args.chapters:
        before, after = load(args.before, chapter), load(args.after, chapter)
        if before is None or after is None:
            print(f"{chapter}: no results {'before' if before is None else 'after'}")
            failed = True
            continue
        diffs, notes, n_values, n_sentences = compare(before["values"], after["values"], args.exact)
        added = sorted(set(after["values"]) - set(before["values"]))
        claims = len(after.get("claims", []))
        how = " (compared word for word)" if args.exact else ""
        print(f"{chapter}: {n_values} values, {len(diffs)} differ; {n_sentences} sentences{how}, "
              f"{len(notes)} with other numbers; {len(added)} new values; {claims} claims")
        for line in diffs:
            print("  DIFFERS", line)
        for line in notes:
            print("  sentence", line)
        failed |= bool(diffs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
