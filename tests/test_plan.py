"""The cost preview (``analysis.book.plan``, ``execute_chapters.py --plan``): query and
token counts against hand counts on the smoke profile, token counts against the
tokenizers themselves, the price arithmetic, and the command line."""

import os
import sys
from pathlib import Path

import pytest

from analysis.book import plan
from analysis.models import BUILTIN_MODELS
from analysis.phrases.params import PARAMS as PHRASES_PARAMS
from analysis.phrases.run import plan as phrases_plan
from analysis.phrases.source import PROMPT_PREFIX
from analysis.size.params import LAB_PROBE_TOKENS
from analysis.size.params import PARAMS as SIZE_PARAMS
from analysis.size.run import plan as size_plan

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from execute_chapters import main as execute_main  # noqa: E402

needs_mirror = pytest.mark.skipif(not os.environ.get("MEMBOOK_DATA_MIRROR"),
                                  reason="MEMBOOK_DATA_MIRROR is unset")


def test_parse_price():
    assert plan.parse_price("0.15,0.6") == (0.15, 0.6)
    assert plan.parse_price(None) is None
    for bad in ("0.15", "a,b", "1,2,3", "-1,2", "nan,1"):
        with pytest.raises(plan.PlanError, match="--price takes IN,OUT"):
            plan.parse_price(bad)


def test_bound_is_checked():
    with pytest.raises(plan.PlanError, match="bound must be"):
        plan.QueryGroup("p", "gemma3-270m", ["a"], 4, bound="maybe")


def test_api_cost_is_tokens_times_price(monkeypatch):
    # two chat prompts of known token counts: 10 and 30 prompt tokens, 50 completion tokens each
    monkeypatch.setattr(plan, "count_prompt_tokens", lambda name, prompts: ([10, 30], "estimate (test)"))
    groups = [plan.QueryGroup("p", "api:some/model", [[{"role": "user", "content": "x"}]] * 2, 50),
              plan.QueryGroup("q", "api:some/model", [[{"role": "user", "content": "y"}]] * 2, 50,
                              bound="at most")]
    frame = plan.table("phrases", groups, price=(2.0, 10.0))
    assert frame["queries"].tolist() == [2, 2]
    assert frame["prompt_tokens"].tolist() == [40, 40]
    assert frame["completion_tokens"].tolist() == [100, 100]
    # (40 * 2 + 100 * 10) / 1e6 dollars per group
    assert frame["cost"].tolist() == pytest.approx([1080e-6, 1080e-6])
    t = plan.totals(frame)
    assert (t["queries"], t["exact_queries"], t["api_queries"]) == (4, 2, 4)
    assert t["cost"] == pytest.approx(2160e-6) and t["exact_cost"] == pytest.approx(1080e-6)


def test_local_models_cost_nothing(monkeypatch):
    monkeypatch.setattr(plan, "count_prompt_tokens", lambda name, prompts: ([7], "exact"))
    frame = plan.table("size", [plan.QueryGroup("p", "gemma3-270m", ["a b"], 6)], price=(5.0, 5.0))
    assert frame["cost"].tolist() == [0.0] and frame["backend"].tolist() == ["local"]


def test_exact_counts_are_the_model_tokenizers_own():
    """A chat prompt is counted after the chat template, a raw prompt with the
    special tokens the model adds: the counts equal the tokenizer's own encodings."""
    from transformers import AutoTokenizer

    from analysis.models.checkpoints import convert_gguf

    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Continue: To be or"}]
    counts, how = plan.count_prompt_tokens("smollm2-135m-instruct", [messages, "To be or not"])
    tok = AutoTokenizer.from_pretrained(str(convert_gguf("smollm2-135m-instruct")))
    expected_chat = len(tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                              return_dict=True)["input_ids"])
    assert how == "exact"
    assert counts == [expected_chat, len(tok("To be or not")["input_ids"])]
    assert counts[0] > len(tok("Be brief.Continue: To be or", add_special_tokens=False)["input_ids"])


def test_api_models_are_estimated_with_the_reference_tokenizer():
    from transformers import AutoTokenizer

    from analysis.models.checkpoints import convert_gguf

    messages = [{"role": "system", "content": "Be brief."},
                {"role": "user", "content": "续写句子：春眠不觉晓"}]
    counts, how = plan.count_prompt_tokens("api:some/model", [messages])
    tok = AutoTokenizer.from_pretrained(str(convert_gguf(plan.REFERENCE_MODEL)))
    by_hand = sum(len(tok(m["content"], add_special_tokens=False)["input_ids"]) for m in messages)
    assert counts == [by_hand + 2 * plan.CHAT_OVERHEAD]
    assert how.startswith("estimate (gemma3-270m tokenizer")


def test_bytes_estimate_when_no_tokenizer_is_installed(monkeypatch):
    monkeypatch.setattr(plan, "_reference", lambda: None)
    # "abcdefghi" is 9 bytes: 3 tokens at 4 bytes a token, rounded up; "é" is 2 bytes: 1 token
    counts, how = plan.count_prompt_tokens("api:m", ["abcdefghi", [{"role": "user", "content": "é"}]])
    assert counts == [3, 1 + plan.CHAT_OVERHEAD]
    assert how.startswith("estimate (UTF-8 bytes / 4")


def test_is_chat_without_loading():
    assert plan.is_chat("api:any/model") is True
    assert plan.is_chat("lab:wide-32") is False
    for name, meta in BUILTIN_MODELS.items():
        assert plan.is_chat(name) is meta["chat"]


@pytest.mark.slow
@needs_mirror
def test_phrases_smoke_plan_by_hand():
    groups = phrases_plan(PHRASES_PARAMS.resolve("smoke"))
    by_part = {}
    for g in groups:
        by_part.setdefault(g.part, []).append(g)
    # 6 phrases of each of 2 types; SmolLM2 is a chat model, so each prompt is the study's prefix + start
    (main,) = by_part["phrases"]
    assert main.queries == 12 and main.max_new_tokens == 24 and main.bound == "exact"
    assert all(p.startswith(PROMPT_PREFIX) for p in main.prompts)
    (again,) = by_part["re-query of short completions"]
    assert again.queries == 12 and again.max_new_tokens == 48 and again.bound == "at most"
    (english,) = by_part["English counterpart"]
    assert english.queries == 8 and english.max_new_tokens == 16  # 4 per type
    # the smoke lab trains 4 phrases at each of 5 copy levels; its ladder has 4 runs
    assert [g.model for g in by_part["lab phrases"]] == [
        "lab:smoke/wide-16", "lab:smoke/wide-32", "lab:smoke/deep-16", "lab:smoke/deep-24"]
    assert {g.queries for g in by_part["lab phrases"]} == {20}


@pytest.mark.slow
@needs_mirror
def test_size_smoke_plan_by_hand():
    groups = size_plan(SIZE_PARAMS.resolve("smoke"))
    probe, *lab = groups
    # 3 texts x 2 prefix lengths x 3 positions, one template, for the one (chat) model
    assert (probe.part, probe.model, probe.queries, probe.max_new_tokens) == (
        "probe (template 1)", "smollm2-135m-instruct", 18, 6)
    assert all(isinstance(p, list) and p[-1]["role"] == "user" for p in probe.prompts)
    # the lab corpus's 37 popular excerpts and 4 baseline stories x 2 lengths x 2 positions, per ladder
    # model and per run outside calibration (the three ablations and the held-out model)
    assert [g.part for g in lab] == ["lab probe"] * 4 + ["outside-calibration probe"] * 4
    assert [g.model for g in lab[4:]] == ["lab:smoke/abl-overtrained", "lab:smoke/abl-overexposed",
                                          "lab:smoke/abl-uneven", "lab:smoke/held-16"]
    assert {g.queries for g in lab} == {164}
    assert {g.max_new_tokens for g in lab} == {LAB_PROBE_TOKENS}


@pytest.mark.slow
@needs_mirror
def test_size_plan_in_completion_mode_sends_raw_prefixes():
    groups = size_plan(SIZE_PARAMS.resolve("smoke", mode="completion", models=["gemma3-270m"]))
    assert groups[0].part == "probe" and all(isinstance(p, str) for p in groups[0].prompts)
    # five templates in chat mode: five queries a position
    groups = size_plan({**SIZE_PARAMS.resolve("smoke"), "template_ids": (1, 2, 3, 4, 5)})
    assert [g.queries for g in groups[:5]] == [18] * 5


@needs_mirror
def test_plan_command_prints_counts_and_cost(capsys, monkeypatch):
    from analysis.models import checkpoints
    from analysis.models.local import LocalModel
    from analysis.models.queries import _local

    def refuse(*args, **kwargs):
        raise AssertionError("a plan needs tokenizers only")

    # a plan never converts a model nor loads weights (tests/test_plan_tokenizers.py: on an empty cache)
    monkeypatch.setattr(checkpoints, "convert_gguf", refuse)
    monkeypatch.setattr(LocalModel, "_load", refuse)
    _local.cache_clear()
    assert execute_main(["--plan", "--profile", "smoke", "--chapters", "size", "lab", "--price", "1,2"]) == 0
    out = capsys.readouterr().out
    assert "size (smoke):" in out and "probe (template 1)" in out
    assert "lab (smoke): queries the lab's models only" in out
    # 18 + (4 ladder models + 3 ablation runs + 1 held-out model) x 164 queries, none to an API model
    assert "total: 1,330 queries (1,330 certain" in out and "0 to API models" in out
    assert "API cost between $0.00 and $0.00" in out


def test_plan_command_rejects_a_bad_price(capsys):
    assert execute_main(["--plan", "--profile", "smoke", "--chapters", "size", "--price", "cheap"]) == 2
    assert "--price takes IN,OUT" in capsys.readouterr().err
    assert execute_main(["--profile", "smoke", "--chapters", "size", "--price", "1,2"]) == 2
    assert "--price goes with --plan" in capsys.readouterr().err


@needs_mirror
def test_a_plan_needs_no_api_key(capsys, monkeypatch):
    for var in ("MEMBOOK_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    argv = ["--profile", "smoke", "--chapters", "size", "-p", "models=api:some/model", "--price", "1,2"]
    assert execute_main(["--plan", *argv]) == 0  # it sends nothing, so it needs no key
    out = capsys.readouterr().out
    assert "18 to API models" in out and "API cost between $" in out
    assert execute_main(argv[:-2]) == 2  # an execution still needs one, and says so at once
    assert "'api:some/model' needs an API key" in capsys.readouterr().err


@needs_mirror
def test_entropy_smoke_plan_by_hand():
    from analysis.entropy.params import PARAMS
    from analysis.entropy.run import plan as entropy_plan
    from analysis.params import without_api_keys
    with without_api_keys():  # a plan sends nothing
        params = PARAMS.resolve("smoke", models=["smollm2-135m-instruct", "api:m"])
    groups = entropy_plan(params)
    # per model: 16 pairs in each of the 3 real sets, a 16-token prompt continued for 16 tokens; then at
    # most 16 kept windows of 32 tokens per set scored for the attacks
    assert [(g.part, g.model, g.queries, g.max_new_tokens, g.tokens_each, g.bound) for g in groups] == [
        ("dataset inference: continuations", "smollm2-135m-instruct", 48, 16, 16, "exact"),
        ("membership attacks: window scores", "smollm2-135m-instruct", 48, 0, 32, "at most"),
        ("dataset inference: continuations", "api:m", 48, 16, 16, "exact"),
        ("membership attacks: window scores", "api:m", 48, 0, 32, "at most")]
    frame = plan.table("entropy", groups, price=(1.0, 2.0))
    # token-id prompts are counted without a tokenizer; only the API model costs
    assert frame["prompt_tokens"].tolist() == [768, 1536, 768, 1536]
    assert frame["cost"].tolist() == [0.0, 0.0, (768 * 1.0 + 768 * 2.0) / 1e6, 1536 / 1e6]
