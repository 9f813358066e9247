"""Re-key a query cache written before the model layer's identities changed.

    python scripts/migrate_query_cache.py [--cache .cache/queries.sqlite] [--dry-run]

Local models used to be keyed ``name@fingerprint``, with a checkpoint folder's
fingerprint taken from its ``config.json`` and its weight files' names, sizes and
modification times. They are now keyed ``name@fingerprint|dtype|device``, with the
fingerprint covering the content of every file that changes outputs
(:mod:`analysis.models.local`). For each local model in the cache this script:

* loads nothing: it resolves the name as a chapter would (``load_model``) and
  recomputes the old fingerprint from the folder as it is now;
* re-keys the model's greedy answers and scores to the new identity, only where
  the old fingerprint still matches the folder (the answers came from these
  weights); answers of weights that no longer exist are left as they are;
* deletes its sampled answers: they were drawn from a random state shared by a
  whole batch, so they are not reproducible one by one; the next run samples them
  again, each from its own generator.

API answers keep their keys (an API identity without a revision label is
unchanged). Run it with no execution in progress; it prints what it did.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from analysis.core.cache import QueryCache, cache_dir, stable_hash  # noqa: E402
from analysis.models import ModelError, load_model  # noqa: E402
from analysis.models.checkpoints import GGUF_SOURCES  # noqa: E402

LOCAL_BACKEND = "transformers"


def legacy_fingerprint(folder: Path) -> str | None:
    """The fingerprint the old code gave a checkpoint folder (None if it has no config)."""
    if not (folder / "config.json").exists():
        return None
    weights = sorted(p for p in folder.iterdir() if p.suffix in (".safetensors", ".bin"))
    return stable_hash({
        "config": (folder / "config.json").read_text(),
        "weights": [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in weights],
    })


def new_identity(old: str) -> tuple[str | None, str]:
    """The new identity of a model stored under the old identity ``old``, or None
    with the reason it cannot be carried over."""
    name, sep, fingerprint = old.rpartition("@")
    if not sep or "|" in fingerprint:
        return None, "already in the new form"
    try:
        model = load_model(name)
    except ModelError:
        return None, "not loadable now"
    if name in GGUF_SOURCES:  # a built-in model: its fingerprint is its package version, unchanged
        expected = model._fingerprint
    elif Path(model.path).is_dir():
        expected = legacy_fingerprint(Path(model.path))
    else:
        return None, "a hub model stored without the commit it resolved to"
    if expected != fingerprint:
        return None, "its weights changed since (answers of other weights)"
    identity = model.cache_identity()
    model.close()
    return identity, "re-keyed"


def _sampled(request: dict) -> bool:
    settings = request.get("settings") or {}
    return float(settings.get("temperature", 0) or 0) > 0


def migrate(path: Path, dry_run: bool = False) -> Counter:
    """Re-key ``path``'s local answers; returns counts of what was done."""
    QueryCache(path).close()  # the schema, if the file is new
    conn = sqlite3.connect(path, timeout=60)
    done: Counter = Counter()
    models = [m for (m,) in conn.execute("SELECT DISTINCT model FROM answers WHERE backend = ?",
                                         (LOCAL_BACKEND,))]
    for old in models:
        identity, why = new_identity(old)
        rows = conn.execute("SELECT key, kind, request FROM answers WHERE backend = ? AND model = ?",
                            (LOCAL_BACKEND, old)).fetchall()
        if identity is None:
            done[f"left: {why}"] += len(rows)
            print(f"{old}: {len(rows):,} rows left as they are: {why}")
            continue
        moved = dropped = 0
        for key, kind, request_json in rows:
            request = json.loads(request_json)
            if _sampled(request):
                dropped += 1
                if not dry_run:
                    conn.execute("DELETE FROM answers WHERE key = ?", (key,))
                continue
            new_key = QueryCache.key(LOCAL_BACKEND, identity, kind, request)
            moved += 1
            if not dry_run:
                conn.execute("UPDATE OR REPLACE answers SET key = ?, model = ? WHERE key = ?",
                             (new_key, identity, key))
        done["re-keyed"] += moved
        done["sampled, deleted"] += dropped
        print(f"{old} -> {identity}: {moved:,} re-keyed, {dropped:,} sampled deleted")
    if not dry_run:
        conn.commit()
    conn.close()
    return done


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=cache_dir() / "queries.sqlite")
    parser.add_argument("--dry-run", action="store_true", help="count, change nothing")
    args = parser.parse_args(argv)
    done = migrate(args.cache, args.dry_run)
    print(", ".join(f"{k}: {v:,}" for k, v in sorted(done.items())) or "nothing to do")
    return 0


if __name__ == "__main__":
    sys.exit(main())
