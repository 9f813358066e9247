"""Recover a damaged query cache, keeping the damaged file.

    python scripts/salvage_query_cache.py [PATH] [--backup BAK] [--journal JOURNAL]

PATH defaults to the cache a chapter would open (``$MEMBOOK_QUERY_CACHE``, else
``$MEMBOOK_CACHE/queries.sqlite``, else ``.cache/queries.sqlite``). The script moves
the damaged file to ``PATH.damaged-<time>`` and writes a new file at PATH with
every answer that can still be read from it, then every answer of its rolling
backup (``PATH.bak``, or BAK) that was not read, then every answer of its journal
(``PATH.journal.jsonl``, or JOURNAL) that neither held. It prints

    kept: N answers (database a, backup b, journal c)
    unreadable: database …, backup …, journal …

(a file that cannot be read at all has an unknown number of unreadable rows). A
chapter run after it sends only the requests whose answers were in none of the
three (see :mod:`analysis.core.salvage`). Run it with no execution in progress.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from analysis.core.cache import QUERY_CACHE_ENV, CacheError, cache_dir
from analysis.core.salvage import salvage


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", nargs="?", type=Path, help="the damaged cache (default: the book's query cache)")
    ap.add_argument("--backup", type=Path, help="the backup to merge (default: PATH.bak)")
    ap.add_argument("--journal", type=Path, help="the journal to merge (default: PATH.journal.jsonl)")
    args = ap.parse_args(argv)
    path = args.path or Path(os.environ.get(QUERY_CACHE_ENV) or cache_dir() / "queries.sqlite")
    try:
        report = salvage(path, args.backup, args.journal)
    except (FileNotFoundError, CacheError) as err:
        print(f"salvage_query_cache.py: error: {err}", file=sys.stderr)
        return 2
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
