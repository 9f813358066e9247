"""What the size chapter's sections glue (``analysis.size.page``) and the ladder's steps
the chapter calls one by one (``analysis.size.steps``), on small hand-built inputs:
the glue names each section returns, its numbers formatted as the page states them,
and the steps assembled as the notebook assembles them giving what
``ladder_method`` gives in one call."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis.size import page, steps
from analysis.size.claims_ladder import ladder_claims
from analysis.size.method import LadderMethod, invalid_bounds, ladder_method
from analysis.size.method_absolute import fit_law, loo_cv, loo_r2_interval, pca_index
from analysis.size.method_groups import group_gap, ladder_agreement
from analysis.size.method_probe import accuracy_profile
from analysis.size.method_relative import kind_sweep, pairwise_tests, tau_sweep
from analysis.size.nulls import ladder_nulls
from analysis.size.params import KIND_ORDER, PAIRWISE_TAU, PAPER_N_POPULAR, PAPER_PREFIX_LENS
from analysis.size.steps import is_ablation
from size_toys import toy_acc


def test_setup_formats_alpha_and_counts_the_papers_texts_and_lengths():
    out = page.setup({"alpha": 0.050, "block_kind": "raw"})
    assert out == {"text": {"n_popular_paper": str(PAPER_N_POPULAR),
                            "n_lens_paper": str(len(PAPER_PREFIX_LENS)), "alpha": "0.05", "kind": "raw"}}


def test_results_counts_queries_and_errors_with_thousands_separators():
    answers = pd.DataFrame({"error": [None] * 1233 + ["timeout"] * 1001})
    out = page.results(answers, {"a": "", "b": "", "c": ""}, {"x": ""}, [1, 3], [], [])
    assert out["text"] == {"size_queries": "2,234", "n_errors": "1,001",
                           "n_texts": "3 popular and 1 baseline", "templates": "1, 3"}
    assert out["md"] == {"gap_text": "", "probe_text": ""}


def _ladder() -> SimpleNamespace:
    theta = pd.Series({"a": 1_234_567.0, "b": 20_000_000.0, "c": 3_000_000.0})
    bounds = pd.DataFrame({"model": list(theta.index), "valid": [True, False, True]})
    return SimpleNamespace(theta=theta, bounds=bounds, law=SimpleNamespace(r2=0.8765, B=-1.234),
                           pca=SimpleNamespace(explained=0.6049), loo=SimpleNamespace(within_band=2 / 3))


def test_the_laws_numbers_are_formatted_as_the_page_states_them():
    assert page._law_values(_ladder()) == {
        "lab_r2": "0.88", "lab_B": "-1.23", "lab_explained": "60%", "lab_band": "67%", "lab_valid": "2 of 3",
        "lab_valid_count": "2", "lab_n": "3", "lab_min": "1.23M", "lab_max": "20.00M"}


def test_paper_tables_and_source_range():
    t1 = pd.DataFrame({"size": [0.5, 12.0, 405.0]})
    t2 = pd.DataFrame({"size": [100, 200, 300, 400], "best_lb": [50, 250, 300, 10],
                       "tightness_pct": [50, 125, 100, 3]})
    out = page.paper_tables(t1, t2, [])
    assert set(out["text"]) == {"paper_law", "t2_valid", "t2_tight", "n_t1", "n_t2"}
    assert out["text"]["t2_valid"] == "3 of 4" and out["text"]["t2_tight"] == "75%"
    assert (out["text"]["n_t1"], out["text"]["n_t2"]) == ("3", "4")
    assert out["text"]["paper_law"].startswith("θ̂(z) = ") and out["md"] == {"size_untestable": ""}
    assert page.source(t1) == {"text": {"paper_min": "0.5B", "paper_max": "405B"}}


def test_outside_without_models_says_so_and_fills_every_name():
    out = page.outside(None, None, [], [], pd.Series(dtype=float), "tiny")
    assert set(out["text"]) == {"lab_ablation_ratio_overtrained", "lab_ablation_ratio_overexposed",
                                "lab_ablation_ratio_uneven", "lab_ablation_valid", "lab_heldout_valid",
                                "lab_ablation_width", "lab_heldout_shape"}
    assert out["text"]["lab_heldout_shape"] == "none in this lab"
    assert out["md"]["lab_ablations"].startswith("**The lab profile 'tiny' trains no ablation")


def test_outside_reads_each_ablations_ratio_and_the_shapes_from_the_lab():
    placed = pd.DataFrame({"model": ["lab:p/abl-uneven", "lab:p/abl-overtrained", "lab:p/held-64"],
                           "theta": [1e6, 1e6, 2e6], "z": [0.1, 0.2, 0.3], "theta_hat": [1.5e6, 0.5e6, 2e6],
                           "ratio": [1.5, 0.5, 1.0], "outside_loo": [True, False, False],
                           "best_lb": [np.nan, 0.25e6, 1e6], "source": ["", "Abs", "Abs"],
                           "reference": [None, None, None], "valid": [True, True, False]})
    shapes = {"abl-uneven": (2, 48), "abl-overtrained": (2, 48), "held-64": (6, 64), "held-96": (6, 96)}
    run = {n: SimpleNamespace(model=SimpleNamespace(n_layer=k, d_model=d)) for n, (k, d) in shapes.items()}
    lab = SimpleNamespace(profile=SimpleNamespace(run=run.__getitem__))
    out = page.outside(placed, lab, ["abl-uneven", "abl-overtrained"], ["held-64", "held-96"],
                       pd.Series([0.8, 1.2]), "p")
    assert out["text"] == {"lab_ablation_ratio_overtrained": "0.50", "lab_ablation_ratio_overexposed": "—",
                           "lab_ablation_ratio_uneven": "1.50", "lab_ablation_valid": "2 of 2",
                           "lab_heldout_valid": "0 of 1", "lab_ablation_width": "48",
                           "lab_heldout_shape": "6 layers, widths 64/96"}
    assert set(out["md"]) == {"lab_ablations"}


def test_is_ablation_reads_the_run_behind_each_model():
    placed = pd.DataFrame({"model": ["lab:p/abl-uneven", "lab:held-64", "abl-overtrained"]})
    assert is_ablation(placed, ["abl-uneven", "abl-overtrained"]).tolist() == [True, False, True]
    assert is_ablation(None, ["abl-uneven"]).tolist() == []


def test_per_text_panels_put_the_sources_text_first_then_the_best_and_the_worst():
    acc = pd.DataFrame({"group": ["popular"] * 4 + ["baseline"],
                        "text_id": ["alice_in_wonderland", "b", "c", "b", "z"],
                        "acc": [0.5, 0.9, 0.1, 0.7, 1.0]})
    assert page.per_text_panels(acc) == ["alice_in_wonderland", "b", "c"]
    assert page.per_text_panels(acc[acc["text_id"] != "alice_in_wonderland"]) == ["b", "c"]


def test_the_notebooks_steps_give_what_ladder_method_gives_in_one_call():
    theta = pd.Series({"w1": 100.0, "w2": 200.0, "w3": 400.0, "d1": 150.0, "d2": 300.0, "d3": 600.0})
    acc, families, alpha, seed = toy_acc(theta, seed=5), pd.Series({m: m[0] for m in theta.index}), 0.05, 3
    whole = ladder_method(acc, theta, alpha=alpha, kind="lifted", seed=seed, families=families)
    # the ladder section's cells, line by line
    profiles = accuracy_profile(acc)
    index = pca_index(profiles)
    law = fit_law(index.z, theta)
    loo = loo_cv(profiles, theta)
    tests = {kind: pairwise_tests(profiles, alpha=alpha, kind=kind) for kind in KIND_ORDER}
    pairs = tests["lifted"]
    sweep = tau_sweep(pairs, theta, alpha=alpha)
    bounds = steps.bounds(theta, pairs, loo, alpha=alpha)
    lab_families = families.reindex(theta.index)
    method = LadderMethod(acc, theta, profiles, index, law, loo, pairs, sweep, bounds,
                             group_gap(acc, seed=seed), families=lab_families,
                             loo_r2_ci=loo_r2_interval(loo.table, seed=seed),
                             agreement=ladder_agreement(acc, lab_families),
                             kinds=kind_sweep(tests, theta, PAIRWISE_TAU, alpha=alpha),
                             invalid=invalid_bounds(bounds, pairs, lab_families))
    for name in ("profiles", "pairs", "sweep", "bounds", "gap", "kinds", "invalid"):
        pd.testing.assert_frame_equal(getattr(method, name), getattr(whole, name), obj=name)
    pd.testing.assert_series_equal(method.pca.z, whole.pca.z)
    pd.testing.assert_frame_equal(method.loo.table, whole.loo.table)
    assert (method.law.r2, method.law.B) == (whole.law.r2, whole.law.B)
    assert method.loo_r2_ci == pytest.approx(whole.loo_r2_ci)
    # and the section glues the same words and numbers from either
    facts = {"excerpt_words": "600", "popular_copies": "8"}

    def glued(m):
        nulls = ladder_nulls(m, alpha, n_perm=20, seed=seed)
        claims = ladder_claims(m, (8,), alpha, tokens=(1000,), nulls=nulls)
        return page.lab_ladder(m, facts, (1000,), nulls, claims, alpha)

    assert glued(method) == glued(whole)
    assert set(glued(method)["md"]) == {"lab_verdict", "lab_pairwise", "lab_invalid_bounds", "lab_kinds",
                                        "lab_gap_ends"}


def test_numbers_reach_the_claims_as_numbers_and_are_worded_once():
    from types import SimpleNamespace

    from analysis.size.steps import popular_copies
    from analysis.size.text import tokens_text

    spread = SimpleNamespace(corpus=SimpleNamespace(popular_copies=6, popular_max_copies=16))
    flat = SimpleNamespace(corpus=SimpleNamespace(popular_copies=8, popular_max_copies=None))
    assert popular_copies(spread) == (6, 16) and popular_copies(flat) == (8,)
    assert tokens_text((2_500_000,)) == "2,500,000" and tokens_text((1000, 2000)) == "1,000 or 2,000"
