"""A cached answer is keyed by everything that determines it: a hub model by the
commit its files resolved to, a checkpoint folder by every file that changes
outputs, dtype and device, an API model by an optional revision label; library
versions are recorded with each answer."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import torch

from analysis.core.cache import QueryCache
from analysis.models import load_model
from analysis.models.base import GenerationSettings
from analysis.models.checkpoints import folder_fingerprint
from analysis.models.local import LocalModel, split_revision
from tiny_model import make_tiny_checkpoint


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny"), ["the cat sat on the mat"], vocab_size=280,
                                hidden=16, layers=1)


def copy(src, dst):
    shutil.copytree(src, dst)
    return dst


def test_a_folder_fingerprint_covers_tokenizer_template_and_generation_config(tiny_dir, tmp_path):
    base = folder_fingerprint(tiny_dir)
    assert folder_fingerprint(copy(tiny_dir, tmp_path / "same")) == base  # content, not path or mtime
    edits = {
        "tokenizer_config.json": lambda d: {**d, "chat_template": "{{ messages[0]['content'] }}"},
        "generation_config.json": lambda d: {**d, "temperature": 0.7},
        "config.json": lambda d: {**d, "rms_norm_eps": 1e-5 if d.get("rms_norm_eps") != 1e-5 else 1e-6},
    }
    for name, edit in edits.items():
        folder = copy(tiny_dir, tmp_path / name)
        data = json.loads((folder / name).read_text()) if (folder / name).exists() else {}
        (folder / name).write_text(json.dumps(edit(data)))
        assert folder_fingerprint(folder) != base, name
    # a file that does not change outputs (a README) does not change the fingerprint
    folder = copy(tiny_dir, tmp_path / "readme")
    (folder / "README.md").write_text("notes")
    assert folder_fingerprint(folder) == base


def test_the_key_carries_dtype_and_device(tiny_dir, tmp_path):
    model = LocalModel("tiny", tiny_dir, cache=QueryCache(tmp_path / "q.sqlite"))
    identity = model.cache_identity()
    assert identity.endswith("|float32|cpu") and identity.startswith(f"tiny@{folder_fingerprint(tiny_dir)}")
    half = LocalModel("tiny", tiny_dir, cache=QueryCache(tmp_path / "q.sqlite"))
    half.dtype = "bfloat16"
    assert half._key("complete", {"p": 1}) != model._key("complete", {"p": 1})


def test_answers_record_library_versions(tiny_dir, tmp_path):
    import transformers

    model = LocalModel("tiny", tiny_dir, is_chat=False, cache=QueryCache(tmp_path / "q.sqlite"))
    answer = model.complete(["the cat"], GenerationSettings(max_new_tokens=2))[0]
    assert answer.meta["versions"] == {"torch": torch.__version__, "transformers": transformers.__version__}
    cached = LocalModel("tiny", tiny_dir, is_chat=False, cache=QueryCache(tmp_path / "q.sqlite"))
    assert cached.complete(["the cat"], GenerationSettings(max_new_tokens=2))[0].meta["versions"]["torch"]


def fake_hub(root, tiny_dir, repo="org/tiny", refs=None):
    """A Hugging Face hub cache holding ``repo`` at the given refs (name -> commit)."""
    folder = root / f"models--{repo.replace('/', '--')}"
    for ref, commit in (refs or {}).items():
        snap = folder / "snapshots" / commit
        shutil.copytree(tiny_dir, snap)
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        (folder / "refs" / ref).write_text(commit)
    return root


def test_a_hub_model_is_keyed_by_the_commit_its_revision_resolves_to(tiny_dir, tmp_path, monkeypatch):
    main, v1 = "a" * 40, "b" * 40
    hub = fake_hub(tmp_path / "hub", tiny_dir, refs={"main": main, "v1": v1})
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache = QueryCache(tmp_path / "q.sqlite")
    default = load_model("org/tiny", cache=cache)
    assert default.cache_identity().startswith(f"org/tiny@commit={main}|")
    pinned = load_model("org/tiny@v1", cache=cache)
    assert pinned.name == "org/tiny@v1" and pinned.cache_identity().startswith(f"org/tiny@v1@commit={v1}|")
    by_kwarg = load_model("org/tiny", revision="v1", cache=cache)
    assert f"commit={v1}" in by_kwarg.cache_identity()
    assert default.path.endswith(main) and pinned.path.endswith(v1)  # weights load from the resolved commit
    # the resolved snapshot really loads and answers
    assert default.complete(["the cat"], GenerationSettings(max_new_tokens=2))[0].ok
    with pytest.raises(Exception, match="cannot resolve the hub model"):
        load_model("org/tiny@v9", cache=cache).cache_identity()


def test_an_api_alias_gets_a_revision_label(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMBOOK_API_KEY", "k")
    cache = QueryCache(tmp_path / "q.sqlite")
    plain = load_model("api:openai/gpt-4o", base_url="http://127.0.0.1:9/v1", cache=cache)
    labelled = load_model("api:openai/gpt-4o@2024-11", base_url="http://127.0.0.1:9/v1", cache=cache)
    assert plain.cache_identity() == "127.0.0.1:9/openai/gpt-4o"
    assert labelled.cache_identity() == "127.0.0.1:9/openai/gpt-4o@2024-11"
    assert labelled.name == "api:openai/gpt-4o@2024-11" and labelled.model_id == "openai/gpt-4o"
    assert split_revision("org/m@rev") == ("org/m", "rev") and split_revision("org/m") == ("org/m", None)
    assert os.environ["MEMBOOK_API_KEY"] == "k"
