"""scripts/migrate_query_cache.py carries a cache written under the old local-model
identities over to the new ones: greedy answers re-keyed (a warm re-run makes no
call), sampled answers deleted, answers of changed weights left alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from analysis.core.cache import QueryCache
from analysis.models.base import GenerationSettings, Request
from analysis.models.local import LocalModel
from tiny_model import make_tiny_checkpoint

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from migrate_query_cache import legacy_fingerprint, migrate  # noqa: E402

GREEDY = GenerationSettings(max_new_tokens=3)
SAMPLED = GenerationSettings(max_new_tokens=3, temperature=1.0)


@pytest.fixture
def tiny_dir(tmp_path):
    return make_tiny_checkpoint(tmp_path / "tiny", ["the cat sat on the mat"], vocab_size=280, hidden=16,
                                layers=1)


def old_row(cache, identity, prompt, settings, text):
    request = {"prompt": prompt, "chat": False, "settings": settings.as_dict()}  # the old request form
    cache.put(QueryCache.key("transformers", identity, "complete", request), backend="transformers",
              model=identity, kind="complete", request=request, text=text)


def test_migration_rekeys_greedy_answers_and_drops_sampled_ones(tiny_dir, tmp_path):
    path = tmp_path / "q.sqlite"
    cache = QueryCache(path)
    name = str(tiny_dir)
    old = f"{name}@{legacy_fingerprint(tiny_dir)}"
    old_row(cache, old, "the cat", GREEDY, "stored greedy answer")
    old_row(cache, old, "the cat", SAMPLED, "stored sampled answer")
    old_row(cache, f"{name}@0000000000000000", "the mat", GREEDY, "answer of other weights")
    changed = "left: its weights changed since (answers of other weights)"
    assert migrate(path) == {"re-keyed": 1, "sampled, deleted": 1, changed: 1}
    model = LocalModel.from_name(name, is_chat=False, cache=cache)
    [answer] = model.complete(["the cat"], GREEDY)
    assert answer.text == "stored greedy answer" and answer.cached and model.calls == 0
    assert cache.count(model=model.cache_identity()) == 1
    assert cache.count() == 2  # the other weights' row is still there, the sampled one is gone
    # a second run finds nothing left to move
    assert migrate(path) == {"left: already in the new form": 1, changed: 1}
    assert Request("the cat", False, SAMPLED).as_dict()["sample"] == 0  # sampled requests now carry it
