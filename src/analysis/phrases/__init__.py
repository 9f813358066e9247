"""The Phrases chapter (``notebooks/phrases.md``): do models complete memorized
state-media phrases?

The chapter re-runs the web study "Can commercial LLMs complete state coordinated
media phrases from memory?": each model receives the first half (``start``) of a
LASSO-selected 20-gram phrase and is asked to continue it; the completion counts
as *memorized* when, after cleaning, some window of it is within normalized
Levenshtein distance 0.4 of the expected second half (``end``).

The package, by role:

* :mod:`.source`: the source scorer's constants and refusal patterns;
* :mod:`.method`: its rules for one completion (cleaning, matching, refusals);
* :mod:`.method_rates`: the rules over a frame (scores, rates, gaps, the lab's
  rates per copy level);
* :mod:`.files`: completions files in the source's schema, and their rescoring;
* :mod:`.method_guess`: what the threshold admits (completions scored against another
  phrase's ending, and a threshold sweep);
* :mod:`.pilot`: the source's own early completions (commit ``fc444b0``), its scorer
  then, and the rule behind each flag the book's scorer does not reproduce;
* :mod:`.run`: the sample, the prompts and the models' completions;
* :mod:`.params`: the chapter's parameters and the source's published rates;
* :mod:`.inference`: the tests on whole units (computed nulls, paired permutations);
* :mod:`.claims`: the decisions, as claims (:mod:`.claims_source`: the headline on the
  source's own data); :mod:`.text`, :mod:`.text_rates`, :mod:`.text_lab`,
  :mod:`.text_sizing` and :mod:`.text_source`: their wording;
* :mod:`.page`: what each section of the page glues.

The English counterpart's phrase selection (a LASSO on word n-grams) lives in
:mod:`analysis.lab.phrase_selection`, since the lab's corpus holds its phrases; the
page reads its ``english_phrases`` from here.

Below, the names the chapter's notebook, the book's other pages and modules, and the
scripts read from the package, each once (``tests/test_surface.py`` keeps them exactly
those); tests import from the submodules.
"""

from analysis.lab.phrase_selection import english_phrases
from analysis.phrases import page
from analysis.phrases.claims import (
    distance_gap_claims,
    lab_claims,
    refusal_claim,
    source_range_claims,
    state_media_gap_claims,
    state_media_gap_min_n,
    windowed_claim,
)
from analysis.phrases.claims_source import models_2026_claim, paper_gap_claims, source_gap_claims
from analysis.phrases.files import rescore_file
from analysis.phrases.inference import distance_gap_null, lab_rows
from analysis.phrases.method_guess import guess_distances, threshold_sweep
from analysis.phrases.method_rates import (
    distance_gap,
    exclusion_table,
    rates,
    rates_by_copies,
    rates_by_mode,
    score,
    score_modes,
    source_type_gaps,
)
from analysis.phrases.params import PARAMS, PROFILES, load_source_rates
from analysis.phrases.pilot import agreement_table, load_pilot, pilot_rates, pilot_scored, rescore_pilot
from analysis.phrases.run import (
    lab_ladder,
    lab_phrases,
    plan,
    prompts,
    query_all,
    query_lab,
    query_sized,
    sample_phrases,
)
from analysis.phrases.source import SOURCE_SETUP, THRESHOLD
from analysis.phrases.text import render
from analysis.phrases.text_lab import lab_rate_table
from analysis.phrases.text_rates import rates_note, source_comparison
