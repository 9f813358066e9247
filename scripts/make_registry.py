"""Build ``data/registry.csv`` from the offline mirror's ``sources.json``.

Usage::

    python scripts/make_registry.py /path/to/mirror/sources.json [--out data/registry.csv]

The registry is the package's list of every input file: where it comes from
(a commit-pinned raw GitHub URL), its size and sha256, licence, a short citation
and its kind. It is committed, so the package never needs the mirror's
``sources.json`` at run time.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path
from urllib.parse import quote

COLUMNS = ["name", "url", "sha256", "bytes", "license", "citation", "kind", "derived_from"]
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "data" / "registry.csv"
COMMIT_RE = re.compile(r"[0-9a-f]{40}")
BIBLE_PARTS = "texts/popular/bible_kjv_parts"

# Files built from other mirror files rather than copied from one source file.
DERIVED = {
    "texts/popular/bible_kjv.txt": (
        f"{BIBLE_PARTS}/8001.orig.txt .. 8066.orig.txt (66 PG ebooks, one per book): "
        "each cleaned (header/footer and producer credits cut), joined in canonical "
        "order with two blank lines between books"
    ),
    "texts/popular/sermon_on_the_mount_kjv.txt": (
        "texts/popular/gospel_of_matthew_kjv.txt: verses 40:005:001 .. 40:007:029"
    ),
    "texts/popular/un_charter.txt": (
        "texts/popular/un_charter.orig.txt: English section (before the Dutch "
        "translation), markdown heading marks removed"
    ),
}


def kind_of(name: str) -> str:
    """Kind of a mirror file: orig, clean, derived, task, phrases, completions or wordlist."""
    if name.startswith("tasks/"):
        return "task"
    if name == "state_media/phrases.json":
        return "phrases"
    if name.startswith("state_media/completions"):
        return "completions"  # the state-media study's own completions (a pilot set)
    if name.startswith("nltk/"):
        return "wordlist"
    if name.endswith(".orig.txt"):
        return "orig"
    if name in DERIVED:
        return "derived"
    if name.startswith("texts/"):
        return "clean"
    raise ValueError(f"no kind for {name!r}")


def raw_url(row: dict) -> str:
    """Commit-pinned raw URL of a row's source file, or '' when there is no single one."""
    if not COMMIT_RE.fullmatch(row["commit"]):
        return ""
    # a member of an archive ("stopwords.zip (member stopwords/english)") is fetched as the
    # archive, whose bytes then fail the member's sha256: such a file comes from the mirror
    path = row["path_in_repo"].split(" (member ")[0]
    return f"https://raw.githubusercontent.com/{row['source_repo']}/{row['commit']}/{quote(path, safe='/')}"


def derived_from(name: str, kind: str) -> str:
    """Which mirror file(s) a cleaned or derived file is built from, and how."""
    if kind == "derived":
        return DERIVED[name]
    if kind != "clean":
        return ""
    orig = name.removesuffix(".txt") + ".orig.txt"
    if name.startswith("texts/baseline/"):
        return f"{orig}: YAML front matter removed"
    if name == "texts/popular/udhr.txt":
        return f"{orig}: unchanged"
    return f"{orig}: Project Gutenberg header/footer stripped"


def citation(row: dict) -> str:
    """Short human citation: what the file is, plus repo@short-commit."""
    if COMMIT_RE.fullmatch(row["commit"]):
        where = f"{row['source_repo']}@{row['commit'][:7]}"
    else:
        where = "66 GITenberg repositories, per-book commits in the bible_kjv_parts rows"
    return f"{row['what']} ({where})"


def registry_rows(sources: list[dict]) -> list[dict]:
    """Registry rows, sorted by name, from the rows of ``sources.json``."""
    out = []
    for row in sources:
        name = row["path"]
        kind = kind_of(name)
        out.append(
            {
                "name": name,
                # For cleaned and derived files this is the original they come from.
                "url": raw_url(row),
                "sha256": row["sha256"],
                "bytes": int(row["bytes"]),
                "license": row["license"],
                "citation": citation(row),
                "kind": kind,
                "derived_from": derived_from(name, kind),
            }
        )
    return sorted(out, key=lambda r: r["name"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", type=Path, help="the mirror's sources.json")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    rows = registry_rows(json.loads(args.sources.read_text(encoding="utf-8")))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    # LF line endings so the committed file is identical on every platform.
    with args.out.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
