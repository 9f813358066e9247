"""The lab's profiles: which corpus, which models, which runs; and the lab page's parameters.

A profile names a corpus configuration, a tokenizer size and a list of runs:

* a **ladder of standard runs** (no injections) in two families that differ in
  depth/width ratio (2 and 6 layers), spanning more than 10× in parameters. Every
  ladder model sees the same tokens in the same order, several passes over a
  small corpus, at a peak learning rate set by its width and depth
  (:func:`ladder_lr`) and a weight decay the profile may set per width;
* **perturbed runs** (base corpus plus injected sequences) at two sizes × two
  token budgets, each with a matching standard run (same model, budget, batch,
  learning rate and seed, hence the same base data order): the counterfactual
  for the predicting chapter's hardness feature. A run's key ignores its name and
  family, so a standard twin at the ladder's budget *is* the ladder run and is
  trained once;
* **injection-range runs**, one per insertion window, each inserting every
  injected sequence (or only those of up to ``range_max_copies`` copies, when
  set) inside its window, at the size given by ``range_width`` and the budget
  ``range_tokens``, with a standard run of that shape (``std-range`` when no
  perturbed twin has it) as their counterfactual. A range run is its standard
  twin until its window opens, so it starts from the twin's checkpoint at that
  step (:mod:`analysis.lab.train`).

:data:`PROFILES` holds the book's three (``smoke``, ``default``, ``gpu``);
:func:`model_name` names a run for ``load_model``; :data:`PARAMS` declares the lab
page's parameters, and :func:`lab_profile_param` and :func:`check_runs` the lab
parameters of the chapters. Nothing here builds or trains: :mod:`analysis.lab.ladder`
builds a profile (``build_lab``), and :mod:`analysis.lab.design` states its design
in words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import pandas as pd

from analysis.lab.config import CorpusConfig, LabConfigError, ModelConfig, RunConfig
from analysis.lab.train import DEVICES
from analysis.params import Declaration, Param, ParameterError

RANGE_WINDOWS = ("q1", "q2", "q3", "q4", "early", "late")

#: AdamW weight decay of every run a profile's per-width map does not set (``RunConfig``'s default)
DEFAULT_WEIGHT_DECAY = RunConfig.__dataclass_fields__["weight_decay"].default


@dataclass(frozen=True)
class LabProfile:
    """A corpus, a tokenizer size, the runs trained on them, and where they train.

    ``device`` is where :func:`build_lab` trains the runs unless the reader asks
    otherwise (``build_lab(device=...)``, ``--device`` or ``$MEMBOOK_LAB_DEVICE``):
    ``cpu`` for the labs whose committed results were trained on the CPU, whatever
    the machine has, so that a reader's GPU never retrains them under other keys;
    ``cuda`` for the GPU lab.
    """

    corpus: CorpusConfig
    vocab_size: int
    runs: tuple[RunConfig, ...] = field(default_factory=tuple)
    device: str = "cpu"

    def __post_init__(self):
        if self.device not in DEVICES:
            raise LabConfigError(f"a profile's device must be one of {', '.join(DEVICES)}, "
                                 f"got {self.device!r}")
        names = [r.name for r in self.runs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise LabConfigError(f"run names must be unique, duplicated: {dupes}")
        for family in {r.family for r in self.runs if r.family.startswith("ladder")}:
            sizes = [(r.model.n_layer, r.model.d_model) for r in self.runs if r.family == family]
            if len(set(sizes)) != len(sizes):
                raise LabConfigError(f"ladder family {family!r} has duplicate sizes: {sizes}")

    def run(self, name: str) -> RunConfig:
        for r in self.runs:
            if r.name == name:
                return r
        raise LabConfigError(f"no run {name!r}; runs: {[r.name for r in self.runs]}")

    def table(self) -> pd.DataFrame:
        """One row per run: name, family, shape, tokens, steps, inject, window."""
        return pd.DataFrame([{
            "run": r.name, "family": r.family, "n_layer": r.model.n_layer, "d_model": r.model.d_model,
            "n_head": r.model.n_head, "d_ff": r.model.d_ff, "context": r.model.context,
            "tokens": r.tokens, "steps": r.steps, "inject": r.inject, "window": r.window or "",
        } for r in self.runs])


#: the family of the size chapter's ablation runs (:func:`_profile`'s ``ablation_width``)
ABLATION = "ablation"
#: the family of another shape that the size chapter bounds out of calibration (``heldout``)
HELDOUT = "heldout"


def ablation_runs(profile: str | LabProfile) -> list[str]:
    """The names of ``profile``'s ablation runs (none when it trains no ablations)."""
    return [r.name for r in get_profile(profile).runs if r.family == ABLATION]


def heldout_runs(profile: str | LabProfile) -> list[str]:
    """The names of ``profile``'s held-out family (none when it has none)."""
    return [r.name for r in get_profile(profile).runs if r.family == HELDOUT]


def unlabelled(run: RunConfig) -> RunConfig:
    """``run`` without the labels its key ignores (name, family, tags): two runs equal
    here train the same weights, once (:func:`analysis.lab.train.run_key`)."""
    return replace(run, name="", family="", tags=())


def ladder_lr(base_lr: float, d_model: int, n_layer: int = 2) -> float:
    """The peak learning rate of a model of width ``d_model`` and ``n_layer`` layers:
    ``base_lr`` at width 128 and 2 layers, scaled by ``sqrt(128 / d_model)`` (wider
    models take smaller steps) and by ``sqrt(2 / n_layer)`` (so do deeper ones: each
    layer adds its update to the same residual stream), to four significant digits.

    The depth factor was set from trial runs on 1M tokens: at the width
    rule alone the 6-layer family's training loss stopped falling between widths 96
    and 128 (4.857 and 4.863 nats on training documents); with it, deep-128 reached
    4.876 against deep-96's 4.953, and held-out losses of 5.710 and 5.747.
    """
    return float(f"{base_lr * (128 / d_model) ** 0.5 * (2 / n_layer) ** 0.5:.4g}")


def _ladder(family: str, layers: int, widths, tokens: int, context: int, prefix: str, batch: int,
            base_lr: float, weight_decay: Mapping[int, float]) -> list[RunConfig]:
    runs = []
    for d in widths:
        heads = max(1, d // 32)
        model = ModelConfig(n_layer=layers, d_model=d, n_head=heads, d_ff=4 * d, context=context)
        runs.append(RunConfig(name=f"{prefix}-{d}", model=model, tokens=tokens, family=family,
                              batch_size=batch, lr=ladder_lr(base_lr, d, layers),
                              weight_decay=weight_decay.get(d, DEFAULT_WEIGHT_DECAY)))
    return runs


def _perturbed(base: RunConfig, tokens: int, tag: str, copies_per_row: int = 1) -> list[RunConfig]:
    """A perturbed run and its matching standard run: ``base``'s model, batch, learning
    rate and seed at ``tokens``. Where ``tokens`` is the ladder's budget the standard
    run has the ladder run's key, so it is trained once."""
    std = replace(base, name=f"std-{tag}", tokens=tokens, family="standard")
    pert = replace(base, name=f"pert-{tag}", tokens=tokens, family="perturbed", inject=True,
                   copies_per_row=copies_per_row)
    return [std, pert]


def _profile(corpus: CorpusConfig, vocab: int, context: int, wide, deep, ladder_tokens: int, small: int,
             large: int, budgets: tuple[int, int], range_tokens: int, range_max_copies: int | None,
             range_width: int, batch: int, base_lr: float, layers: tuple[int, int] = (2, 6),
             copies_per_row: int = 1, weight_decay: Mapping[int, float] | None = None,
             device: str = "cpu", ablation_width: int | None = None,
             heldout: tuple[int, tuple[int, ...]] | None = None) -> LabProfile:
    """A profile's runs. ``weight_decay`` maps a width to its ladder models' AdamW weight
    decay (both families); widths not in it, and every perturbed, standard and range
    run, train at :data:`DEFAULT_WEIGHT_DECAY`. A standard twin whose settings then
    differ from the ladder run of its size is a training of its own.

    ``ablation_width`` adds the size chapter's three ablations of the 2-layer ladder
    model of that width, each breaking one assumption of the size study on purpose,
    in the direction that would make a small model look larger:
    ``abl-overtrained`` trains for twice the ladder's tokens, ``abl-overexposed`` on
    the corpus with every popular excerpt at 4× its copies, ``abl-uneven`` with half
    the popular texts at 4× their copies and the other half left out
    (:attr:`RunConfig.popular_copies_factor`, :attr:`RunConfig.popular_dropped`).
    ``heldout`` (layers, widths) adds a family of another shape, ``held-<width>``,
    trained like the ladder but outside it (family :data:`HELDOUT`): the size
    chapter bounds its models out of calibration, as the paper's targets are.
    """
    weight_decay = dict(weight_decay or {})
    unknown = sorted(set(weight_decay) - set(wide) - set(deep))
    if unknown:
        raise LabConfigError(f"weight_decay names widths {unknown} that are in no ladder family "
                             f"(wide {list(wide)}, deep {list(deep)})")
    wide_runs = _ladder("ladder-wide", layers[0], wide, ladder_tokens, context, "wide", batch, base_lr,
                        weight_decay)
    deep_runs = _ladder("ladder-deep", layers[1], deep, ladder_tokens, context, "deep", batch, base_lr,
                        weight_decay)
    by_width = {r.model.d_model: replace(r, weight_decay=DEFAULT_WEIGHT_DECAY) for r in wide_runs}
    runs = wide_runs + deep_runs
    for size_tag, d in (("s", small), ("l", large)):
        for budget_tag, tokens in zip(("1x", "2x"), budgets):
            runs += _perturbed(by_width[d], tokens, f"{size_tag}{budget_tag}", copies_per_row)
    range_base = replace(by_width[range_width], tokens=range_tokens)
    if not any(not r.inject and unlabelled(r) == unlabelled(range_base) for r in runs):
        runs.append(replace(range_base, name="std-range", family="standard"))
    runs += [replace(range_base, name=f"range-{w}", family="range", inject=True, window=w,
                     max_copies=range_max_copies, copies_per_row=copies_per_row) for w in RANGE_WINDOWS]
    if ablation_width is not None:
        ladder_run = {r.model.d_model: r for r in wide_runs}.get(ablation_width)
        if ladder_run is None:
            raise LabConfigError(f"ablation_width must be a width of the 2-layer ladder {list(wide)}, "
                                 f"got {ablation_width!r}")
        runs += [replace(ladder_run, name="abl-overtrained", family=ABLATION, tokens=2 * ladder_tokens),
                 replace(ladder_run, name="abl-overexposed", family=ABLATION, popular_copies_factor=4),
                 replace(ladder_run, name="abl-uneven", family=ABLATION, popular_copies_factor=4,
                         popular_dropped=0.5)]
    if heldout is not None:
        held_layers, held_widths = heldout
        runs += _ladder(HELDOUT, held_layers, held_widths, ladder_tokens, context, "held", batch, base_lr, {})
    return LabProfile(corpus=corpus, vocab_size=vocab, runs=tuple(runs), device=device)


PROFILES = {
    "smoke": _profile(
        CorpusConfig(background_words=20_000, popular_excerpt_words=150, popular_copies=2,
                     popular_max_copies=8, heldout_words_per_text=100, n_facts=40, n_problems=40,
                     per_task_per_level=1, duplicate_levels=(0, 1, 4, 16), injection_words=12,
                     phrases_per_level=4, fact_controls=4, fact_copies_spread="log-uniform",
                     fact_separated_share=0.5, fact_shared_answers=0.5, fact_list_max=4),
        vocab=1024, context=128, wide=(16, 32), deep=(16, 24), ladder_tokens=80_000,
        small=16, large=32, budgets=(80_000, 120_000), range_tokens=120_000, range_max_copies=None,
        range_width=16, batch=16, base_lr=3e-3, copies_per_row=2, ablation_width=32, heldout=(4, (16,)),
    ),
    # Lab v3, designed from the phenomena backwards (the lab page's table of phenomena shows
    # each signal), sized from measured speeds on 2 cores. Every ladder model sees the same 2.5M tokens, about
    # four passes over the corpus, at a learning rate set by its width and depth. On 1M tokens the 6-layer
    # family's held-out loss did not fall at every step: deep-96 ended at 5.821 nats against deep-64's 5.778,
    # an order that another init seed reversed (5.759 against 5.808), so the step was within seed noise
    # (0.03-0.06 nats). On the corpus-4 lab, going from 1M to 2.5M tokens moved wide-64 and wide-128 on
    # held-out text from 5.875 and 5.713 to 5.782 and 5.641, and on training documents from 5.157 and 4.786 to
    # 4.694 and 4.134: the larger model's lead on training text (what the size chapter reads) grows from 0.37
    # to 0.56 nats. On the corpus-5 lab (40 documents each, the lab page's comparison) training loss falls at
    # every step in both families (wide 5.25 to 4.11, deep 5.15 to 4.03), and at one weight decay (0.1)
    # held-out loss fell up to width 96, then rose by 0.005 and 0.012 nats at width 128; Lab v2 trained width
    # 128 at 0.4, Lab v3 trains every run at 0.1 (so wide-128 is also std-l2x) and reports what loss does. Lab
    # v3's families do not overlap in size: on Lab v2's overlapping ladder the 2-layer family memorized
    # 1.22-1.67 times more per parameter and two cross-family bounds failed, so here every 6-layer model
    # (0.06M-0.32M) is smaller than every 2-layer one (0.33M-1.05M), by design (the lab page says so). The
    # ladder stops at width 128 (1.05M parameters): in trial runs on 1M tokens a 2-layer model of width 256
    # (3.1M) reached no lower loss than width 128, at the width's learning rate or at 0.7 of it. Batches of 8
    # rows rather than 16: in trial runs on 1M tokens wide-128 reached a training-document loss of 4.73 nats
    # at batch 8 against 5.14 at batch 16 (and 5.43 at twice the learning rate), while wide-32 moved only from
    # 5.44 to 5.36, so the extra steps buy the larger models most. Popular excerpts are short and graded from
    # 2 to 64 copies. Injected sequences are 20 words (prefix and suffix of about 18 tokens), most of them at
    # 16-48 copies, the levels where extraction is partial for the lab's injected models (with 168 sequences,
    # pert-s2x extracted 0%, 17% and 77% at 16, 32 and 48 copies, range-q4 and range-late 44% at 32): the
    # predicting chapter's Experiment 2 pairs a sequence only where two runs disagree, about one in five of
    # the sequences at such levels. Their 10,074 copies would not fit a quarter of a range run one to a row,
    # so up to 3 copies share a row (copies_per_row). std-s2x is the ladder's wide-64 (one training for both).
    # The injection-range runs are width 64, the small perturbed size: at width 128 every range run extracted
    # all or nothing at 32-64 copies (q4 and late 100%, the others 0%). They fork from std-s2x.
    # Lab v4 changes Lab v3 (below) where its models never learned what a chapter tests. Facts: 300 (30 of
    # them never-trained controls) in documents of two to four sentences, half saying the span and the answer
    # with filler between, copies log-uniform on 1..64 (Lab v3: one-sentence documents, Zipfian 1..256, and
    # 0.0% question accuracy in every copies bin), half of them among TriviaQA items that share an answer, and
    # each answer in 0..8 lists, so an answer's count is not its fact's copies; each fact's first copy is the
    # cloze sentence the training-format probe reads. Injected sequences: 17 per task at 0, 1 and 4 copies
    # (102 non-members and 102 members at each of 1 and 4 copies for the membership benchmark; Lab v3 had 18
    # non-members against 330 members), 8 at 16, fewer above, drawn to their levels at random; pert-l2x of Lab
    # v3 extracted 17%, 60% and 87% at 16, 24 and 32 copies. Popular excerpts at 2 to 16 copies: the entropy
    # sample's verbatim spike came from the excerpts at 17 to 64 copies (2,821 of 10,000 pairs at score 0 on
    # Lab v3; 784 when its answers are reweighted to a 2-16 spread, bench/results/entropy_copy_designs.json).
    # The ladder spans 37x (deep-6, 28K parameters, to wide-128, 1.05M); three ablations of wide-64 err in the
    # direction that makes a small model look larger (twice the tokens; popular excerpts at 4x copies;
    # half the popular texts at 4x and half left out); a held-out 4-layer family is outside calibration.
    "default": _profile(
        CorpusConfig(background_words=100_000, popular_excerpt_words=200, popular_copies=2,
                     popular_max_copies=16, injection_words=20, per_task_per_level=4,
                     duplicate_levels=(0, 1, 4, 16, 24, 32, 64), level_counts=(17, 17, 17, 8, 6, 4, 3),
                     n_facts=300, fact_max_copies=64, fact_copies_spread="log-uniform", fact_controls=30,
                     fact_separated_share=0.5, fact_shared_answers=0.5, fact_list_max=8,
                     phrase_levels=(0, 1, 4, 16, 64), phrases_per_level=20),
        vocab=4096, context=128, wide=(56, 64, 80, 96, 128), deep=(6, 10, 16, 24, 40),
        ladder_tokens=2_500_000, small=64, large=128, budgets=(1_000_000, 2_500_000),
        range_tokens=2_500_000, range_max_copies=None, range_width=64, batch=8, base_lr=3e-3,
        copies_per_row=3, ablation_width=64, heldout=(4, (16, 32, 64)),
    ),
    # The GPU lab, for one 80 GB GPU, about 12 hours at the throughput analysis.lab.budget
    # assumes (the lab page computes its budget from this configuration). The same design
    # at Hubble's copy levels (0/1/4/16/64/256 copies of every injected sequence) and a
    # ladder spanning about 59x, from 2.4M to 138M parameters in two families (4 and 12
    # layers), every ladder model trained on the same 200M tokens; the perturbed and
    # injection-range runs at twice that. Contexts of 512 tokens, batches of 64 rows.
    # The offline data mirror limits the unique text: its popular books hold about 3.4M
    # words outside the claimed windows, and background beyond 2M words leaves too few
    # of the English counterpart's phrases free of overlap with it (8 per level need 48).
    # The corpus is about 5.1M training words, so the ladder's tokens are many passes over
    # it (the lab page gives the epochs): a reader with more text raises background_words.
    "gpu": _profile(
        CorpusConfig(background_words=2_000_000, popular_excerpt_words=1_000, popular_copies=4,
                     popular_max_copies=256, injection_words=40, per_task_per_level=32,
                     duplicate_levels=(0, 1, 4, 16, 64, 256), fact_max_copies=256, fact_zipf_a=1.3,
                     n_facts=1_500, n_problems=1_500, phrase_levels=(0, 1, 4, 16, 64, 256),
                     phrases_per_level=8),
        vocab=32_768, context=512, wide=(64, 128, 256, 512, 768, 1024), deep=(64, 128, 256, 384, 512, 768),
        ladder_tokens=200_000_000, small=256, large=768, budgets=(200_000_000, 400_000_000),
        range_tokens=400_000_000, range_max_copies=None, range_width=768, batch=64, base_lr=3e-3,
        layers=(4, 12), device="cuda",
    ),
}



def model_name(profile: str, run: str) -> str:
    """The ``load_model`` name of a run: ``lab:<run>`` for the default profile,
    ``lab:<profile>/<run>`` for the others, so profiles never shadow each other."""
    return f"lab:{run}" if profile == "default" else f"lab:{profile}/{run}"


def get_profile(profile: str | LabProfile) -> LabProfile:
    """The profile named ``profile`` (a :class:`LabProfile` is returned as it is)."""
    if isinstance(profile, LabProfile):
        return profile
    if profile not in PROFILES:
        raise LabConfigError(f"lab profile must be one of {sorted(PROFILES)}, got {profile!r}")
    return PROFILES[profile]



def check_runs(param: str, names, lab_profile: str, family: str | None = None, inject: bool | None = None,
               at_least: int = 1) -> None:
    """Raise :class:`~analysis.params.ParameterError` naming ``param`` unless every
    name in ``names`` is a run of the lab profile ``lab_profile`` (of ``family``,
    a prefix such as ``"ladder"``, and injected or not, when given), and there are
    at least ``at_least`` of them. Loads and trains nothing."""
    names = [names] if isinstance(names, str) else list(names)
    runs = [r for r in get_profile(lab_profile).runs
            if (family is None or r.family.startswith(family)) and (inject is None or r.inject == inject)]
    allowed = [r.name for r in runs]
    bad = [n for n in names if n not in allowed]
    if bad or len(names) < at_least:
        what = "runs" if at_least == 1 else f"at least {at_least} runs"
        raise ParameterError(f"{param} must name {what} of the {lab_profile!r} lab"
                             f"{' with an exposure table' if inject else ''}: {allowed}; got {names}")


def lab_profile_param() -> Param:
    """The ``lab_profile`` parameter every chapter with a lab section declares: the
    lab whose runs it uses (trained when missing). A chapter's profiles set it; a
    reader who has trained the GPU lab re-runs a chapter on it with
    ``-p lab_profile=gpu``."""
    return Param("lab_profile", "the lab whose models the chapter's lab sections use (trained if missing)",
                 kind="choice", choices=tuple(PROFILES))


def _lab_params() -> Declaration:
    return Declaration(
        "lab",
        # the chapters' paper profiles use the default lab, which trains on a CPU; the GPU lab
        # (lab_profile=gpu) is chosen explicitly
        profiles={"smoke": {"lab_profile": "smoke"}, "default": {"lab_profile": "default"},
                  "paper": {"lab_profile": "default"}},
        params=(lab_profile_param(),
                Param("n_eval_docs", "training and held-out documents in the loss comparison", kind="int",
                      lo=1, default=40),),
        profile_help={"smoke": "the smoke lab (seconds to train)", "default": "the book's lab",
                      "paper": "the book's lab (the chapters' paper profiles use it; the GPU lab "
                               "is lab_profile=gpu)"},
    )


PARAMS = _lab_params()
