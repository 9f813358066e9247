"""Running models for the entropy chapter (:mod:`analysis.entropy.run`): scoring
through the shared model interface, the runs over lengths, strategies and sets,
the decodings and a lab run's training stream, on models that answer from the prompt."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis.core.cache import QueryCache
from analysis.entropy import run as R
from analysis.entropy.candidates import CandidateSet
from analysis.entropy.method import sample_pairs
from analysis.entropy.method_sets import analyse_set, kept, stream_composition
from analysis.entropy.params import EntropyError
from analysis.models import GenerationSettings, Model, ModelError
from entropy_fakes import EchoModel, EchoTokens, ScoringEcho


def test_strategy_settings():
    s = R.strategy_settings("Temp=0.8, top_k=10", seed=4)
    assert (s.temperature, s.top_k, s.top_p, s.seed) == (0.8, 10, None, 4)
    assert R.strategy_settings("Temp=0").greedy
    with pytest.raises(EntropyError, match="strategy must be one of"):
        R.strategy_settings("Temp=2")



def test_discoverable_scores_errors_and_caches(tmp_path):
    model = EchoModel("echo", cache=QueryCache(tmp_path / "q.sqlite"))
    pairs = pd.DataFrame({
        "prefix": [[1, 2, 3, 4], [5, 6, 7, 8], [99, 1, 2, 3]],
        "suffix": [[3, 4], [7, 0], [5, 5]],
    })
    out = R.discoverable(model, pairs, GenerationSettings(), "written")
    # responses are the last two prompt tokens: [3, 4] (verbatim), [7, 8] (one edit), error
    assert out["score"].iloc[0] == 0 and out["score"].iloc[1] == 1 and np.isnan(out["score"].iloc[2])
    assert out["error"].iloc[2] == "HTTP 503" and out["response"].iloc[2] is None
    assert list(out["lcs_ps"]) == [2, 1, 0] and list(out["trivial"]) == [True, True, False]
    assert list(out["suffix_text"]) == ["3 4", "7 0", "5 5"]
    assert kept(out).empty  # two trivial, one error: nothing is scored
    assert model.calls == 3
    again = R.discoverable(model, pairs, GenerationSettings(), "none")
    # the answers come from the cache; the error is retried (and fails again)
    assert model.calls == 4 and len(kept(again)) == 2
    with pytest.raises(EntropyError, match="set 'x'.*no pair survived"):
        analyse_set("x", out)
    with pytest.raises(EntropyError, match="same length"):
        uneven = pd.DataFrame({"prefix": [[1], [2]], "suffix": [[1], [1, 2]]})
        R.discoverable(model, uneven, GenerationSettings())


def test_text_only_backends_refuse_token_level_generation(tmp_path):
    class TextOnly(Model):
        backend = "text"

        def _generate(self, requests):
            yield from ()

    m = TextOnly("t", cache=QueryCache(tmp_path / "q.sqlite"))
    with pytest.raises(ModelError, match="token-level studies need a local model"):
        m.generate_ids([[1, 2]])
    with pytest.raises(ModelError, match="token-level studies need a local model"):
        m.tokenize(["a"])
    with pytest.raises(ModelError, match="at least one token"):
        m.generate_ids([[]])



def test_lab_decodings_use_the_other_temperature():
    d = R.lab_decodings(0.0, seed=3)
    assert list(d) == ["greedy", "temperature 0.8"]
    assert (d["greedy"].temperature, d["temperature 0.8"].temperature, d["greedy"].seed) == (0.0, 0.8, 3)
    assert list(R.lab_decodings(0.8)) == ["temperature 0.8", "greedy"]
    assert list(R.lab_decodings(0.5)) == ["temperature 0.5", "temperature 0.8"]




class WordLengths:
    """Tokenizes a text into the lengths of its words."""

    name = "lab:toy"

    def tokenize(self, texts):
        return [[len(w) for w in t.split()] for t in texts]


def toy_lab(inject=True, max_copies=None):
    doc = SimpleNamespace
    corpus = SimpleNamespace(
        documents=[doc(doc_id="background-0", text="a bb ccc", copies=1, kind="background"),
                   doc(doc_id="knowledge-0", text="k", copies=8, kind="knowledge"),
                   doc(doc_id="popular-x", text="dddd e", copies=4, kind="popular"),
                   doc(doc_id="background-1", text="ff g", copies=1, kind="background"),
                   doc(doc_id="reasoning-0", text="r", copies=1, kind="reasoning")],
        injections=[SimpleNamespace(seq_id="qa-000-0", task="qa", text="never", copies=0),
                    SimpleNamespace(seq_id="qa-004-0", task="qa", text="x yy zzz wwww", copies=4),
                    SimpleNamespace(seq_id="qa-016-0", task="qa", text="x yy", copies=16)])
    run = SimpleNamespace(inject=inject, max_copies=max_copies)
    return SimpleNamespace(corpus=corpus, profile=SimpleNamespace(run=lambda name: run))




def test_training_stream_holds_what_the_run_saw():
    s = R.training_stream(toy_lab(), "pert", WordLengths())
    # background first, then popular, then the injections with at least one copy
    assert list(s.tokens) == ["background-0", "background-1", "popular-x", "qa-004-0", "qa-016-0"]
    assert s.tokens["background-0"] == [1, 2, 3] and s.tokens["qa-004-0"] == [1, 2, 3, 4]
    assert s.copies == {"background-0": 1, "background-1": 1, "popular-x": 4, "qa-004-0": 4, "qa-016-0": 16}
    assert s.source["popular-x"] == "popular" and s.source["qa-016-0"] == "injected"
    assert s.left_out == {"knowledge": 1, "reasoning": 1}
    assert list(R.training_stream(toy_lab(max_copies=4), "r", WordLengths()).tokens)[-1] == "qa-004-0"
    assert "qa-004-0" not in R.training_stream(toy_lab(inject=False), "std", WordLengths()).tokens
    comp = stream_composition(s)
    assert comp.to_dict("list") == {"source": ["background", "popular", "injected"], "documents": [2, 1, 2],
                                    "fewest": [1, 4, 4], "most": [1, 4, 16], "tokens": [5, 2, 6],
                                    "tokens in stream": [5, 8, 48]}


def test_runs_over_lengths_strategies_and_sets(tmp_path):
    model = EchoTokens("lab:echo", cache=QueryCache(tmp_path / "q.sqlite"))
    pairs = pd.DataFrame({"prefix": [[1, 2, 3, 4], [5, 6, 7, 8]], "suffix": [[9, 9, 9], [8, 8, 8]]})
    by_len = R.by_suffix_length(model, pairs, [1, 3], GenerationSettings(), "none", n_boot=5)
    assert list(by_len) == ["|s| = 1", "|s| = 3"]
    assert [r.pairs for r in by_len.values()] == [2, 2]
    # the echo answers the last |s| prompt tokens: with |s| = 1, 4 vs 9 and 8 vs 8
    assert sorted(by_len["|s| = 1"].levels["e"]) == [0, 1]
    by_s = R.by_strategy(model, pairs, ["Temp=0", "Temp=0.5"], "none", n_boot=5)
    assert list(by_s) == ["Temp=0", "Temp=0.5"]
    docs = {str(k): " ".join(str(10 * k + i) for i in range(12)) for k in range(1, 4)}
    sets = [CandidateSet("A", docs, 1, "known", reference=True), CandidateSet("B", docs, 0, "new")]
    inf = R.dataset_inference(model, sets, 4, 2, 5, GenerationSettings(), "none", n_boot=5, seed=0,
                              sample_seed=7)
    assert inf.model == "echo" and list(inf.results) == ["A", "B"]
    assert inf.table["kind"].tolist() == ["lab", "lab"] and inf.table["set"].tolist() == ["A", "B"]
    tokens = dict(zip(docs, model.tokenize(list(docs.values()))))
    # set k is sampled with seed sample_seed + k
    assert inf.results["B"].pairs == len(sample_pairs(tokens, 4, 2, 5, seed=8))




def test_injected_candidates_are_members_by_the_runs_copies():
    c = R.injected_candidates(toy_lab(), "pert", WordLengths())
    assert c["seq_id"].tolist() == ["qa-000-0", "qa-004-0", "qa-016-0"]
    assert c["copies"].tolist() == [0, 4, 16] and c["member"].tolist() == [0, 1, 1]
    assert c["ids"].tolist()[1] == [1, 2, 3, 4]
    # a run that inserts up to 4 copies never saw the 16-copy sequence; a run without injections none
    assert R.injected_candidates(toy_lab(max_copies=4), "r", WordLengths())["member"].tolist() == [0, 1, 0]
    assert R.injected_candidates(toy_lab(inject=False), "std", WordLengths())["member"].sum() == 0


def test_dataset_inference_scores_the_same_pairs_for_the_attacks(tmp_path):
    model = ScoringEcho("lab:echo", cache=QueryCache(tmp_path / "q.sqlite"))
    docs = {str(k): " ".join(str(10 * k + i) for i in range(12)) for k in range(1, 4)}
    sets = [CandidateSet("A", docs, 1, "known", reference=True), CandidateSet("B", docs, 0, "new")]
    inf = R.dataset_inference(model, sets, 4, 2, 5, GenerationSettings(), "none", n_boot=5, sample_seed=7,
                              mia_pairs=3)
    assert list(inf.attacks) == ["A", "B"]
    a = inf.attacks["A"]
    assert len(a) == 3 and a["member"].tolist() == [1, 1, 1]
    assert inf.attacks["B"]["member"].tolist() == [0] * 3
    # the window p + s of the first kept pair: its tokens 1..5 get log p = -t / 10, so the loss is
    # their mean / 10
    first = kept(R.discoverable(model, sample_pairs(dict(zip(docs, model.tokenize(list(docs.values())))),
                                                    4, 2, 5, seed=7), GenerationSettings(), "none")).iloc[0]
    window = first["prefix"] + first["suffix"]
    assert a["nll"].iloc[0] == pytest.approx(np.mean(window[1:]) / 10)
    # Min-K%++ at 20% of 5 tokens: the lowest (log p + 1) / 2, from the largest token id
    assert a["minkpp"].iloc[0] == pytest.approx((-max(window[1:]) / 10 + 1) / 2)
    none = R.dataset_inference(model, sets, 4, 2, 5, GenerationSettings(), "none", n_boot=5, sample_seed=7)
    assert none.attacks == {}
