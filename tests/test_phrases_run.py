"""Running the Phrases study on a model: sampling, prompts, re-query, errors."""

import pandas as pd
import pytest

from analysis import phrases as ph
from analysis.core.cache import QueryCache, cached_frame
from analysis.models import Answer, GenerationSettings, Model

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
    a = ph.sample_phrases(PHRASES, 2, seed=3)
    assert a["type"].value_counts().to_dict() == {"propaganda": 2, "culturax": 2}
    assert a.equals(ph.sample_phrases(PHRASES, 2, seed=3))
    assert len(ph.sample_phrases(PHRASES, 1000)) == 6  # capped at the type's size
    with pytest.raises(ValueError, match="n_per_type"):
        ph.sample_phrases(PHRASES, 0)


def test_prompts_follow_the_source():
    assert ph.prompts(PHRASES.head(1), chat=True) == ["续写句子：开始一"]
    assert ph.prompts(PHRASES.head(1), chat=False) == ["开始一"]
    assert ph.prompts(PHRASES.head(1), chat=True, lang="en") == ["Continue the sentence: 开始一"]


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
    out = ph.query(
        model, PHRASES, GenerationSettings(max_new_tokens=64), GenerationSettings(max_new_tokens=256)
    )
    assert out["requeried"].tolist() == [False, True, False, False, True, False]
    assert pd.isna(out.loc[2, "completion"]) and "HTTP 500" in out.loc[2, "error"]
    scored = ph.score(out, PHRASES)
    assert scored["excluded"].tolist() == [False, False, True, False, True, True]
    rates = ph.rates(scored).set_index("type")
    assert (rates.loc["propaganda", "matched"], rates.loc["propaganda", "total"]) == (2, 2)
    assert (rates.loc["culturax", "matched"], rates.loc["culturax", "total"]) == (0, 1)
    # a warm re-run asks nothing, and an errored request is retried
    again = Scripted({**script, "续写句子：开始三": "第三个结尾在这里还有更多"}, cache=model.cache)
    out2 = ph.query(
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
    out = ph.select_distinctive_phrases(a, b, n_per_class=9, max_per_text=(2, 9), stride=3)
    pop = out[out["type"] == "popular"]
    assert pop["text_id"].value_counts().max() <= 2 and len(pop) == 6
    assert (out[out["type"] == "baseline"]["text_id"] == "new").sum() == 9


def test_plain_prose_drops_markup_and_verse_labels():
    assert ph.plain_prose("40:005:003 Blessed are<br/> the `poor`").split() == [
        "Blessed",
        "are",
        "the",
        "poor",
    ]


def test_distance_gap_is_a_one_sided_mann_whitney_test():
    from scipy.stats import mannwhitneyu

    scored = pd.DataFrame({
        "model": ["m"] * 8, "type": ["propaganda"] * 4 + ["culturax"] * 4,
        "distance": [0.5, 0.6, 0.7, 0.8, 0.75, 0.9, 0.95, 1.0], "excluded": [False] * 7 + [True],
    })
    gap = ph.distance_gap(scored, "propaganda", "culturax").iloc[0]
    assert (gap["n_first"], gap["n_second"]) == (4, 3)
    assert gap["median_first"] == pytest.approx(0.65) and gap["median_second"] == 0.9
    ref = mannwhitneyu([0.5, 0.6, 0.7, 0.8], [0.75, 0.9, 0.95], alternative="less")
    assert gap["U"] == ref.statistic == 1.0  # only 0.8 > 0.75
    assert gap["p_value"] == pytest.approx(ref.pvalue)


def test_a_run_whose_every_answer_is_excluded_reports_counts_instead_of_crashing(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from analysis.book import plots, report

    script = {p: RuntimeError("HTTP 503") for p in ph.prompts(PHRASES, chat=True)}
    script["续写句子：起点一"] = "作为一个人工智能助手，我不能继续"  # a refusal: also excluded
    model = Scripted(script, cache=QueryCache(tmp_path / "q.sqlite"))
    out = ph.query_all({"m": model}, PHRASES, GenerationSettings(max_new_tokens=64))
    scored = ph.score_modes(out, PHRASES)
    main = scored[("windowed", "faithful")]
    rates = ph.rates(main)
    assert rates.empty and main["excluded"].all() and int(main["error"].sum()) == 5
    table = ph.exclusion_table(scored)
    assert table["errors"].sum() == 5 and table["refusals (faithful)"].sum() == 1
    assert ph.headline(rates, "scripted")["propaganda"].startswith("not measured")
    assert ph.top_rate(rates, plots.TYPE_LABELS).startswith("not measured")
    source = pd.DataFrame({"model": ["a", "a"], "type": ["propaganda", "culturax"], "rate_pct": [4.3, 0.8]})
    assert ph.comparison_verdict(rates, source) == ("This run has no scorable completion to set beside the "
                                                    "source's rates.")
    assert report.gap_sentences(ph.distance_gap(main, "propaganda", "culturax"), "a", "b").startswith(
        "No model has scorable completions")
    for fig in (plots.phrase_rates(rates, source), plots.mode_comparison(ph.rates_by_mode(scored)),
                plots.distance_distribution(main, 0.4)):
        assert fig.axes[0].texts[0].get_text() == plots.NO_SCORABLE  # a figure that says why it is empty


def test_comparison_verdict_places_each_model_against_the_source_range():
    source = pd.DataFrame({"model": ["a", "b"], "type": ["propaganda"] * 2, "rate_pct": [3.2, 8.8]})
    rates = pd.DataFrame({"model": ["low", "mid", "high"], "type": ["propaganda"] * 3,
                          "rate": [0.001, 0.05, 0.30], "ci_lo": [0.0, 0.01, 0.2], "ci_hi": [0.02, 0.12, 0.4]})
    text = ph.comparison_verdict(rates, source)
    assert text.startswith("The source's 2024 models reproduce 3.2% to 8.8% of state-media endings")
    assert "low (0.1%) is below the source's range" in text
    assert "mid (5.0%) is within reach of the source's range" in text
    assert "high (30.0%) is above the source's range" in text
