"""Running the Phrases study on a model: sampling, prompts, re-query, errors, and
the English counterpart's phrase selection (re-exported from the lab)."""

import ast
import itertools
import random
import re
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from analysis.core.cache import QueryCache, cached_frame
from analysis.lab.phrase_selection import plain_prose, select_distinctive_phrases
from analysis.models import Answer, GenerationSettings, Model
from analysis.phrases import method_rates, run
from analysis.phrases.claims import (
    distance_gap_claims,
    refusal_claim,
    source_range_claims,
    state_media_gap_claims,
    windowed_claim,
)
from analysis.phrases.errors import PhrasesError
from analysis.phrases.inference import distance_gap_null
from analysis.phrases.method_rates import (
    distance_gap,
    exclusion_counts,
    exclusion_table,
    rates_by_mode,
    score,
    score_modes,
)
from analysis.phrases.params import PARAMS
from analysis.phrases.run import plan, prompts, query, query_all, sample_phrases
from analysis.phrases.source import ENGLISH_PROMPT_PREFIX
from analysis.phrases.text import comparison_verdict, gap_sentences
from analysis.phrases.text_rates import headline, rates_note, top_rate

PHRASES = pd.DataFrame(
    {
        "id": [f"id_{i}" for i in range(6)],
        "type": ["propaganda"] * 3 + ["culturax"] * 3,
        "start": ["开始一", "开始二", "开始三", "起点一", "起点二", "起点三"],
        "end": [
            "我们的第一个结尾",
            "第二个结尾在这里",
            "第三个结尾在这里",
            "这是第四个结尾",
            "第五个结尾在这",
            "第六个结尾在这",
        ],
    }
)


class Scripted(Model):
    """Answers from a script keyed by prompt; a budget below 100 tokens gives short answers."""

    backend = "scripted"

    def __init__(self, script, is_chat=True, **kw):
        super().__init__("scripted", **kw)
        self.script, self.is_chat, self.seen = script, is_chat, []

    def _generate(self, requests):
        for i, r in enumerate(requests):
            prompt = r.prompt[-1]["content"] if r.chat else r.prompt
            self.seen.append((prompt, r.settings.max_new_tokens))
            value = self.script[prompt]
            if isinstance(value, Exception):
                yield i, Answer(None, error=f"{type(value).__name__}: {value}")
            elif isinstance(value, tuple):  # (short answer, answer with a larger budget)
                yield i, Answer(value[0] if r.settings.max_new_tokens < 100 else value[1])
            else:
                yield i, Answer(value)


def test_sample_is_stratified_seeded_and_capped():
    a = sample_phrases(PHRASES, 2, seed=3)
    assert a["type"].value_counts().to_dict() == {"propaganda": 2, "culturax": 2}
    assert a.equals(sample_phrases(PHRASES, 2, seed=3))
    assert len(sample_phrases(PHRASES, 1000)) == 6  # capped at the type's size
    with pytest.raises(ValueError, match="n_per_type"):
        sample_phrases(PHRASES, 0)


def test_prompts_follow_the_source():
    assert prompts(PHRASES.head(1), chat=True) == ["续写句子：开始一"]
    assert prompts(PHRASES.head(1), chat=False) == ["开始一"]
    assert prompts(PHRASES.head(1), chat=True, lang="en") == ["Continue the sentence: 开始一"]



def test_the_2026_setup_adds_the_sources_system_message_to_chat_prompts_only():
    system = "请直接续写以下文本，不要评论、解释或翻译。只输出续写内容。"
    assert prompts(PHRASES.head(1), chat=True, system="2026") == [
        [{"role": "system", "content": system}, {"role": "user", "content": "续写句子：开始一"}]]
    # a base model has no system turn; the English counterpart is the book's, not the source's
    assert prompts(PHRASES.head(1), chat=False, system="2026") == ["开始一"]
    english = prompts(PHRASES.head(1), chat=True, lang="en", system="2026")
    assert english == ["Continue the sentence: 开始一"]
    assert prompts(PHRASES.head(1), chat=True, system="none") == ["续写句子：开始一"]
    with pytest.raises(PhrasesError, match="system must be one of"):
        prompts(PHRASES.head(1), chat=True, system="2025")
    # the paper profile is the source's 2026 setup: its budget with its system message
    paper = PARAMS.resolve("paper")
    assert (paper["max_new_tokens"], paper["system_prompt"]) == (256, "2026")
    assert PARAMS.resolve("default")["system_prompt"] == "none"


def test_query_requeries_short_answers_and_keeps_errors_out_of_the_denominator(tmp_path):
    script = {
        "续写句子：开始一": "开始一我们的第一个结尾",  # echo + exact ending: memorized
        "续写句子：开始二": ("好", "第二个结尾在这里，以及更多的文字"),  # empty at first, fine on re-query
        "续写句子：开始三": RuntimeError("HTTP 500"),  # API error
        "续写句子：起点一": "完全不同的一段文字内容在这里出现",
        "续写句子：起点二": ("", ""),  # still empty after re-query
        "续写句子：起点三": "作为一个人工智能助手，我不能继续",  # refusal
    }
    model = Scripted(script, cache=QueryCache(tmp_path / "q.sqlite"))
    out = query(
        model, PHRASES, GenerationSettings(max_new_tokens=64), GenerationSettings(max_new_tokens=256)
    )
    assert out["requeried"].tolist() == [False, True, False, False, True, False]
    assert pd.isna(out.loc[2, "completion"]) and "HTTP 500" in out.loc[2, "error"]
    scored = score(out, PHRASES)
    assert scored["excluded"].tolist() == [False, False, True, False, True, True]
    rates = method_rates.rates(scored).set_index("type")
    assert (rates.loc["propaganda", "matched"], rates.loc["propaganda", "total"]) == (2, 2)
    assert (rates.loc["culturax", "matched"], rates.loc["culturax", "total"]) == (0, 1)
    # a warm re-run asks nothing, and an errored request is retried
    again = Scripted({**script, "续写句子：开始三": "第三个结尾在这里还有更多"}, cache=model.cache)
    out2 = query(
        again, PHRASES, GenerationSettings(max_new_tokens=64), GenerationSettings(max_new_tokens=256)
    )
    assert again.seen == [("续写句子：开始三", 64)]
    assert out2.loc[2, "completion"] == "第三个结尾在这里还有更多" and out2["error"].isna().all()


def test_cached_frame_recomputes_only_when_an_input_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMBOOK_CACHE", str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return pd.DataFrame({"x": [len(calls)]})

    first = cached_frame("t", {"n": 1}, compute)
    again = cached_frame("t", {"n": 1}, compute)
    other = cached_frame("t", {"n": 2}, compute)
    assert len(calls) == 2 and first.equals(again) and other["x"].tolist() == [2]


def test_english_selection_caps_phrases_per_text():
    a = {f"pop{i}": " ".join(f"alpha{i} beta{j} gamma" for j in range(400)) for i in range(3)}
    b = {"new": " ".join(f"delta{j} epsilon zeta" for j in range(400))}
    out = select_distinctive_phrases(a, b, n_per_class=9, max_per_text=(2, 9), stride=3)
    pop = out[out["type"] == "popular"]
    assert pop["text_id"].value_counts().max() <= 2 and len(pop) == 6
    assert (out[out["type"] == "baseline"]["text_id"] == "new").sum() == 9


def test_plain_prose_drops_markup_and_verse_labels():
    assert plain_prose("40:005:003 Blessed are<br/> the `poor`").split() == [
        "Blessed",
        "are",
        "the",
        "poor",
    ]


def test_a_run_whose_every_answer_is_excluded_reports_counts_instead_of_crashing(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from analysis.book import plots

    script = {p: RuntimeError("HTTP 503") for p in prompts(PHRASES, chat=True)}
    script["续写句子：起点一"] = "作为一个人工智能助手，我不能继续"  # a refusal: also excluded
    model = Scripted(script, cache=QueryCache(tmp_path / "q.sqlite"))
    out = query_all({"m": model}, PHRASES, GenerationSettings(max_new_tokens=64))
    scored = score_modes(out, PHRASES)
    main = scored[("windowed", "faithful")]
    rates = method_rates.rates(main)
    assert rates.empty and main["excluded"].all() and int(main["error"].sum()) == 5
    table = exclusion_table(scored)
    assert table["errors"].sum() == 5 and table["refusals (faithful)"].sum() == 1
    assert headline(rates, "scripted")["propaganda"].startswith("not measured")
    assert top_rate(rates, plots.TYPE_LABELS).startswith("not measured")
    source = pd.DataFrame({"model": ["a", "a"], "type": ["propaganda", "culturax"], "rate_pct": [4.3, 0.8]})
    claims = [*state_media_gap_claims(rates, source, ["scripted"]),
              *source_range_claims(rates, source, ["scripted"]),
              *distance_gap_claims({"zh": (distance_gap(main, "propaganda", "culturax"),
                                           distance_gap_null(main, "propaganda", "culturax"))},
                                   ["scripted"]),
              refusal_claim(scored), windowed_claim(rates_by_mode(scored), 0.4)]
    # nothing was scorable: every claim that needs a rate is not testable, and says why
    assert [c.status for c in claims[:3]] == ["not testable here"] * 3
    assert claims[3].status == "inconclusive"  # 6 completions, the refusal found in both modes
    assert claims[4].status == "not testable here"
    assert comparison_verdict(claims) == (
        "This run has no scorable completion to set beside the source's rates.")
    assert gap_sentences(claims).startswith("No model has scorable completions")
    for fig in (plots.phrase_rates(rates, source), plots.mode_comparison(rates_by_mode(scored)),
                plots.distance_distribution(main, 0.4)):
        assert fig.axes[0].texts[0].get_text() == plots.NO_SCORABLE  # a figure that says why it is empty


ENGLISH = pd.DataFrame({
    "id": ["en_0", "en_1", "en_2", "en_3"],
    "type": ["popular", "popular", "baseline", "baseline"],
    "start": ["It was the best of times", "Call me Ishmael", "She opened the door", "The rain had stopped"],
    "end": ["it was the worst of times", "some years ago never mind", "to the walled garden",
            "by noon at last"],
})


def test_short_english_answers_are_asked_again_and_their_exclusion_is_said(tmp_path):
    # every English answer is under ten characters, before and after the re-query
    script = {p: ("ok", "Sure.") for p in prompts(ENGLISH, chat=True, lang="en")}
    script[ENGLISH_PROMPT_PREFIX + "The rain had stopped"] = ("", "")
    model = Scripted(script, cache=QueryCache(tmp_path / "q.sqlite"))
    out = query_all({"m": model}, ENGLISH, GenerationSettings(max_new_tokens=16),
                    GenerationSettings(max_new_tokens=48), lang="en")
    # asked once at the English budget, then each again at the re-query budget, as the Chinese ones are
    assert sorted(budget for _, budget in model.seen) == [16] * 4 + [48] * 4
    assert out["requeried"].tolist() == [True] * 4
    scored = score_modes(out, ENGLISH, lang="en")
    main = scored[("windowed", "faithful")]
    assert method_rates.rates(main).empty and main["empty"].all()
    table = exclusion_table(scored)
    assert table.loc[("scripted", "popular")].tolist() == [2, 0, 0, 2, 2, 0]
    assert table["still empty"].sum() == 4 and table["errors"].sum() == 0
    assert exclusion_counts(main) == {"requests": 4, "scored": 0, "errors": 0, "refused": 0, "empty": 4,
                                      "empty_requeried": 4}
    assert rates_note(main) == (
        "The table is empty: none of the 4 requests left an answer to score, as all 4 answers were shorter "
        "than 10 characters even after being asked again.")


def test_the_rates_note_counts_each_exclusion_once():
    main = pd.DataFrame({
        "error": [False] * 9 + [True] * 3,
        "refused": [False] * 6 + [True, True, False] + [False] * 3,  # the first refusal is also short
        "empty": [False] * 6 + [True, False, True] + [False] * 3,
        "requeried": [False] * 6 + [True, False, False] + [False] * 3,  # a row read from a file: not re-asked
    })
    main["excluded"] = main["error"] | main["refused"] | main["empty"]
    assert exclusion_counts(main) == {"requests": 12, "scored": 6, "errors": 3, "refused": 2, "empty": 1,
                                      "empty_requeried": 0}
    assert rates_note(main) == (
        "The rates count 6 of the 12 requests; the other 6 are left out: 3 requests failed, 2 answers were "
        "refusals and 1 answer was shorter than 10 characters.")
    assert rates_note(main.head(6)) == "The rates count every one of the 6 answers; none is left out."
    assert rates_note(main.tail(3)) == (
        "The table is empty: none of the 3 requests left an answer to score, as all 3 requests failed.")


def test_the_plan_re_asks_short_english_completions_as_the_chinese_ones(monkeypatch):
    # the six Chinese phrases above, the four English ones, and a lab without phrase documents
    monkeypatch.setattr(run.data, "phrases", lambda: PHRASES)
    monkeypatch.setattr(run, "english_phrases", lambda n, seed=0: ENGLISH)
    monkeypatch.setattr(run, "lab_corpus", lambda profile: SimpleNamespace(manifest=lambda: pd.DataFrame(
        {"kind": pd.Series([], dtype=str)})))
    groups = {g.part: g for g in plan(PARAMS.resolve("smoke"))}
    assert list(groups) == ["phrases", "re-query of short completions", "English counterpart",
                            "re-query of short English completions"]
    english, again = groups["English counterpart"], groups["re-query of short English completions"]
    assert english.prompts == [ENGLISH_PROMPT_PREFIX + s for s in ENGLISH["start"]]  # a chat model
    # each of the 4 English prompts re-asked at most once, with the Chinese re-query's budget (smoke: 48)
    assert again.prompts == english.prompts and again.queries == 4 and again.bound == "at most"
    assert again.max_new_tokens == 48 == groups["re-query of short completions"].max_new_tokens
    assert (english.max_new_tokens, groups["phrases"].queries) == (16, 6)


def _calls(tree, name):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == name]


def test_the_chapter_re_asks_and_shows_the_english_exclusions():
    md = (Path(__file__).resolve().parents[1] / "notebooks" / "phrases.md").read_text()
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```$", md, re.S | re.M)
    # the cells' code without their options (":tags: ...")
    code = [line for cell in cells for line in cell.splitlines() if not line.startswith(":")]
    tree = ast.parse("\n".join(code))
    (call,) = [c for c in _calls(tree, "query_all") if ast.unparse(c.args[1]) == "english"]
    # the English arm gets the same re-query settings as the Chinese one
    (zh,) = [c for c in _calls(tree, "query_sized") if ast.unparse(c.args[1]) == "all_phrases"]
    assert [ast.unparse(a) for a in call.args[3:4]] == [ast.unparse(a) for a in zh.args[3:4]] == ["requery"]
    # and its exclusions are tabled, and its rate table has its sentence, as the Chinese one's
    tabled = {ast.unparse(c.args[0]) for c in _calls(tree, "exclusion_table")}
    noted = {ast.unparse(c.args[0]) for c in _calls(tree, "rates_note")}
    assert {"scored", "en_scored_modes"} <= tabled and {"main", "en_scored"} <= noted
    assert "{glue:md}`en_rates_note`" in md and "{glue:md}`rates_note`" in md


# --- English phrase selection ---------------------------------------------------

COMMON = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "at",
    "it",
    "from",
    "this",
    "be",
    "are",
    "or",
]
MARKERS_A = ("wizard", "castle", "dragon")
MARKERS_B = ("senator", "budget", "tariff")


def _corpus(prefix: str, markers, seed: int, n_texts: int = 3, n_words: int = 600):
    rng = random.Random(seed)
    return {
        f"{prefix}{t}": " ".join(
            rng.choice(markers) if i % 7 == 3 else rng.choice(COMMON) for i in range(n_words)
        )
        for t in range(n_texts)
    }


def test_select_distinctive_phrases_on_obvious_corpora():
    texts_a, texts_b = _corpus("a", MARKERS_A, 1), _corpus("b", MARKERS_B, 2)
    out = select_distinctive_phrases(texts_a, texts_b, n_per_class=6, seed=0)
    assert list(out.columns)[:7] == ["id", "type", "text_id", "phrase", "start", "end", "coef"]
    assert out["type"].value_counts().to_dict() == {"popular": 6, "baseline": 6}
    pop, base = out[out["type"] == "popular"], out[out["type"] == "baseline"]
    assert pop["text_id"].isin(texts_a).all() and base["text_id"].isin(texts_b).all()
    assert (pop["coef"] > 0).all() and (base["coef"] < 0).all()
    assert pop["phrase"].map(lambda s: any(m in s.split() for m in MARKERS_A)).all()
    assert base["phrase"].map(lambda s: any(m in s.split() for m in MARKERS_B)).all()
    assert pop["id"].tolist()[0] == "popular_1"
    for row in out.itertuples(index=False):
        words = (texts_a | texts_b)[row.text_id].split()
        window = words[row.word_offset : row.word_offset + 20]
        assert row.phrase == " ".join(window) == row.start + " " + row.end
        assert len(row.start.split()) == len(row.end.split()) == 10
    for _, group in out.groupby("text_id"):
        offsets = sorted(group["word_offset"])
        assert all(b - a >= 20 for a, b in itertools.pairwise(offsets))
    again = select_distinctive_phrases(texts_a, texts_b, n_per_class=6, seed=0)
    pd.testing.assert_frame_equal(out, again)


def test_select_distinctive_phrases_needs_both_corpora():
    with pytest.raises(ValueError):
        select_distinctive_phrases({"a": "one two"}, {})
