"""What the query cache's answer journal costs, per 10,000 answers.

    python scripts/bench_cache_journal.py [--answers 10000] [--dir DIR]

Stores ``--answers`` answers of the size a chat chapter stores (a 300-character
chat prompt, a 1,000-character completion, the usage meta) one ``put`` at a time,
as the model layer does, into a fresh cache in a temporary folder on the disk of
DIR (default: the system's temporary folder): with the journal (fsynced every
``SYNC_EVERY`` seconds), with its appends switched off, and (a tenth of the answers,
scaled) with an fsync after every answer. Records the database's and the journal's bytes and the
seconds of each run, and the time salvage takes to rebuild the database from the
journal alone, in ``bench/results/cache_journal.json``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from analysis.core import jsonio
from analysis.core.cache import QueryCache, backup_path
from analysis.core.journal import SYNC_EVERY, journal_path
from analysis.core.salvage import salvage

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "cache_journal.json"


def store(path: Path, n: int, journal: str) -> float:
    """Seconds to store ``n`` answers one at a time (the backup left out of the timing),
    with the ``journal`` ``"off"``, fsynced at its default rhythm, or fsynced ``"every"`` answer."""
    prompt = "Complete the following passage exactly as it continues in the original text: " + "w" * 220
    with QueryCache(path) as cache:
        if journal == "off":
            cache._entry.journal.append = lambda row: None
        elif journal == "every":
            cache._entry.journal.sync_every = 0.0
        t0 = time.perf_counter()
        for i in range(n):
            request = {"prompt": [{"role": "user", "content": f"{i} {prompt}"}], "chat": True,
                       "settings": {"max_new_tokens": 256, "temperature": 0.0, "top_k": None,
                                    "top_p": None, "seed": 0}}
            cache.put(QueryCache.key("openai", "api:x", "chat", request), backend="openai", model="api:x",
                      kind="chat", request=request, text=f"{i} " + "a completion " * 77,
                      meta={"usage": {"prompt_tokens": 80, "completion_tokens": 256},
                            "finish_reason": "length"})
        seconds = time.perf_counter() - t0
        cache._entry.written = False  # no backup: it is not what is measured
    return seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--answers", type=int, default=10_000)
    ap.add_argument("--dir", type=Path, default=None,
                    help="a folder on the disk to measure (default: $TMPDIR)")
    args = ap.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="bench-journal-", dir=args.dir))
    try:
        n = args.answers
        without = store(folder / "plain.sqlite", n, "off")
        with_journal = store(folder / "journaled.sqlite", n, "default")
        few = max(1, n // 10)  # an fsync per answer: a tenth of the answers, scaled
        every = store(folder / "every.sqlite", few, "every") * n / few
        db = folder / "journaled.sqlite"
        db_bytes, journal_bytes = db.stat().st_size, journal_path(db).stat().st_size
        db.unlink()
        backup_path(db).unlink(missing_ok=True)
        t0 = time.perf_counter()
        report = salvage(db)
        rebuild = time.perf_counter() - t0
        assert report.from_journal == n, report
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    per = 10_000 / n
    record = {
        "answers": n, "sync_every_s": SYNC_EVERY,
        "executed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": platform.platform(), "disk": str(args.dir or tempfile.gettempdir()),
        "per_10k": {
            "database_mb": round(db_bytes * per / 1e6, 2), "journal_mb": round(journal_bytes * per / 1e6, 2),
            "seconds_without_journal": round(without * per, 2),
            "seconds_with_journal": round(with_journal * per, 2),
            "journal_seconds": round((with_journal - without) * per, 2),
            "ms_per_answer_added": round((with_journal - without) / n * 1e3, 3),
            "seconds_fsync_every_answer": round(every * per, 2),
            "salvage_from_journal_seconds": round(rebuild * per, 2),
        },
        "cpu_count": os.cpu_count(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    jsonio.write(OUT, record)
    print(jsonio.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
