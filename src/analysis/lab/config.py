"""Configuration of the lab: the corpus, the injected sequences, the models and runs.

Every field is part of the cache key of what is built from it, so a changed
input rebuilds (and retrains) only what depends on it. Invalid values fail in
``__post_init__``, before any work, with a message naming the field and the
allowed values. Used by the lab page (``notebooks/lab.md``) and by the
entropy, predicting, size and distributional chapters.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: Hubble's duplicate ladder (0 = control, never inserted)
DUPLICATE_LEVELS = (0, 1, 4, 16, 64)
#: copy levels of the phrase documents (0 = control, never trained)
PHRASE_LEVELS = (0, 1, 4, 16, 64)
#: insertion windows as fractions of training; "all" is everywhere
WINDOWS = {
    "all": (0.0, 1.0),
    "q1": (0.0, 0.25),
    "q2": (0.25, 0.5),
    "q3": (0.5, 0.75),
    "q4": (0.75, 1.0),
    "early": (0.0, 0.5),
    "late": (0.5, 1.0),
}
FACT_SPREADS = ("zipf", "log-uniform")
INJECTION_TASKS = ("passage", "qa", "gsm8k", "mmlu", "biography", "random_words")


class LabConfigError(ValueError):
    """An invalid lab configuration, raised before any work."""


def _positive(name: str, value, allow_zero: bool = False) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        raise LabConfigError(
            f"{name} must be a {'non-negative' if allow_zero else 'positive'} integer, got {value!r}"
        )


@dataclass(frozen=True)
class CorpusConfig:
    """What goes into the base corpus and which sequences are injected.

    Word counts are whitespace words of the cleaned texts.
    """

    seed: int = 0
    #: words of background text (the popular books outside their excerpt and held-out windows), trained once
    background_words: int = 300_000
    #: words per popular-text excerpt window, and how many copies of each excerpt go in
    popular_excerpt_words: int = 1_000
    popular_copies: int = 4
    #: when above popular_copies, popularity is graded as on the web: the texts' copies
    #: spread geometrically from popular_copies (least popular) to popular_max_copies
    #: (most), over the texts in a seeded order; 0 = every text gets popular_copies
    popular_max_copies: int = 0
    #: words per popular-text held-out window (never trained on: non-member text)
    heldout_words_per_text: int = 500
    #: TriviaQA facts, each a short stretch of the question's words beside the answer in
    #: 1..fact_max_copies documents of two to four sentences, of varied wording (spread by
    #: fact_copies_spread; analysis.lab.corpus.facts); no document holds a question
    n_facts: int = 400
    fact_zipf_a: float = 1.1
    fact_max_copies: int = 32
    #: each fact's question words also occur without its answer (alone, or beside another
    #: fact's answer) in 0..fact_mentions_max documents, P(m) proportional to
    #: (m + 1)**-fact_mentions_zipf_a, drawn independently of its copies, so
    #: P(answer | question n-gram) varies (0 = none)
    fact_mentions_max: int = 16
    fact_mentions_zipf_a: float = 0.5
    #: how facts' copies spread on 1..fact_max_copies: "zipf" (fact_zipf_a) or
    #: "log-uniform" (as many facts in every doubling of copies)
    fact_copies_spread: str = "zipf"
    #: facts that get no fact document (0 copies, a seeded draw): the probes' never-trained baseline
    fact_controls: int = 0
    #: share of fact documents that say the span and the answer in two sentences with
    #: filler between, so a short n-gram context never sees both
    fact_separated_share: float = 0.0
    #: share of the facts chosen among TriviaQA items whose answer another item also has
    fact_shared_answers: float = 0.0
    #: each fact's answer is listed in 0..fact_list_max answer lists (uniform, independent of copies)
    fact_list_max: int = 2
    #: GSM8K-style worked arithmetic problems (numbers differ from every test problem)
    n_problems: int = 400
    #: injected sequences per (task, duplicate level)
    per_task_per_level: int = 6
    injection_tasks: tuple[str, ...] = INJECTION_TASKS
    duplicate_levels: tuple[int, ...] = DUPLICATE_LEVELS
    #: sequences per task at each duplicate level, overriding per_task_per_level
    #: (same length as duplicate_levels; empty = per_task_per_level everywhere), so
    #: a high level can hold fewer sequences and not crowd out the base data
    level_counts: tuple[int, ...] = ()
    #: length of every injected sequence, in words (about 1.3 tokens per word)
    injection_words: int = 40
    #: phrase documents: the phrases chapter's English counterpart (its LASSO-selected
    #: 20-word popular-text phrases), each a training document on its own, trained as
    #: many times as its copy level says (0 = a control, never trained);
    #: phrases_per_level at every level of phrase_levels, 0 = no phrase documents
    phrase_levels: tuple[int, ...] = PHRASE_LEVELS
    phrases_per_level: int = 0

    def __post_init__(self):
        for name in (
            "background_words",
            "popular_excerpt_words",
            "popular_copies",
            "n_facts",
            "n_problems",
            "per_task_per_level",
            "injection_words",
            "fact_max_copies",
        ):
            _positive(
                name, getattr(self, name), allow_zero=name in ("background_words", "n_facts", "n_problems")
            )
        _positive("heldout_words_per_text", self.heldout_words_per_text, allow_zero=True)
        _positive("popular_max_copies", self.popular_max_copies, allow_zero=True)
        if self.popular_max_copies and self.popular_max_copies < self.popular_copies:
            raise LabConfigError(
                f"popular_max_copies must be 0 or at least popular_copies ({self.popular_copies}), "
                f"got {self.popular_max_copies}")
        unknown = sorted(set(self.injection_tasks) - set(INJECTION_TASKS))
        if unknown or not self.injection_tasks:
            raise LabConfigError(
                f"injection_tasks must be a non-empty subset of {INJECTION_TASKS}, got {unknown}"
            )
        if any(not isinstance(c, int) or c < 0 for c in self.duplicate_levels):
            raise LabConfigError(
                f"duplicate_levels must be non-negative integers, got {self.duplicate_levels}"
            )
        if len(set(self.duplicate_levels)) != len(self.duplicate_levels):
            raise LabConfigError(f"duplicate_levels must be distinct, got {self.duplicate_levels}")
        if self.level_counts and (
            len(self.level_counts) != len(self.duplicate_levels)
            or any(not isinstance(c, int) or isinstance(c, bool) or c < 1 for c in self.level_counts)
        ):
            raise LabConfigError(
                f"level_counts must be empty or {len(self.duplicate_levels)} positive integers, one per "
                f"duplicate level {self.duplicate_levels}, got {self.level_counts}")
        if self.fact_zipf_a <= 0:
            raise LabConfigError(f"fact_zipf_a must be > 0, got {self.fact_zipf_a}")
        _positive("fact_mentions_max", self.fact_mentions_max, allow_zero=True)
        _positive("fact_controls", self.fact_controls, allow_zero=True)
        _positive("fact_list_max", self.fact_list_max, allow_zero=True)
        if self.fact_controls >= max(self.n_facts, 1):
            raise LabConfigError(f"fact_controls must be below n_facts ({self.n_facts}), "
                                 f"got {self.fact_controls}")
        if self.fact_copies_spread not in FACT_SPREADS:
            raise LabConfigError(f"fact_copies_spread must be one of {FACT_SPREADS}, "
                                 f"got {self.fact_copies_spread!r}")
        for name in ("fact_separated_share", "fact_shared_answers"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
                raise LabConfigError(f"{name} must be a number in [0, 1], got {v!r}")
        a = self.fact_mentions_zipf_a
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not a >= 0:
            raise LabConfigError(f"fact_mentions_zipf_a must be a number >= 0, got {a!r}")
        _positive("phrases_per_level", self.phrases_per_level, allow_zero=True)
        levels = self.phrase_levels
        if (not isinstance(levels, (tuple, list)) or not levels or len(set(levels)) != len(levels)
                or any(not isinstance(c, int) or isinstance(c, bool) or c < 0 for c in levels)):
            raise LabConfigError(
                f"phrase_levels must be a non-empty sequence of distinct non-negative integers (copies in "
                f"training, 0 = a never-trained control), such as {PHRASE_LEVELS}, got {levels!r}")

    def level_sizes(self) -> list[tuple[int, int]]:
        """``(duplicate level, sequences per task)`` for every level, in order."""
        counts = self.level_counts or (self.per_task_per_level,) * len(self.duplicate_levels)
        return list(zip(self.duplicate_levels, counts))

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ModelConfig:
    """A Llama-style decoder (``LlamaConfig``); the vocabulary comes from the tokenizer."""

    n_layer: int
    d_model: int
    n_head: int
    d_ff: int
    context: int = 128

    def __post_init__(self):
        for name in ("n_layer", "d_model", "n_head", "d_ff", "context"):
            _positive(name, getattr(self, name))
        if self.d_model % self.n_head:
            raise LabConfigError(f"d_model ({self.d_model}) must be divisible by n_head ({self.n_head})")

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RunConfig:
    """One training run: a model, a token budget, a schedule, and whether to inject.

    ``window`` overrides every injected sequence's insertion window with one of
    :data:`WINDOWS` (the injection-range runs); ``None`` keeps "all".
    ``max_copies``, when set, makes the run insert only the sequences with at
    most that many copies (a quarter of a run has too few rows for the top
    levels of every task). ``copies_per_row`` lets up to that many copies of
    different sequences share one row, one after the other, while their tokens
    fit (a quarter of a run holds that many times more copies); 1 puts every copy
    in a row of its own. ``popular_copies_factor`` trains the run on the corpus
    with every popular excerpt at that many times its copies, and
    ``popular_dropped`` leaves that share of the popular texts out (a seeded draw,
    :meth:`~analysis.lab.corpus.Corpus.dropped_popular`): the size chapter's
    over-exposed (factor 4) and uneven-exposure (factor 4, half the texts dropped)
    ablations; 1 and 0 are the corpus as built.
    """

    name: str
    model: ModelConfig
    tokens: int
    family: str = "standard"
    inject: bool = False
    window: str | None = None
    batch_size: int = 32
    lr: float = 3e-3
    warmup_frac: float = 0.05
    weight_decay: float = 0.1
    seed: int = 0
    tags: tuple[str, ...] = field(default_factory=tuple)
    max_copies: int | None = None
    copies_per_row: int = 1
    popular_copies_factor: int = 1
    popular_dropped: float = 0.0

    def __post_init__(self):
        _positive("tokens", self.tokens)
        _positive("popular_copies_factor", self.popular_copies_factor)
        d = self.popular_dropped
        if isinstance(d, bool) or not isinstance(d, (int, float)) or not 0 <= d < 1:
            raise LabConfigError(f"popular_dropped must be a number in [0, 1), got {d!r}")
        _positive("copies_per_row", self.copies_per_row)
        if self.copies_per_row > 1 and not self.inject:
            raise LabConfigError(f"run {self.name!r}: copies_per_row={self.copies_per_row} needs inject=True")
        _positive("batch_size", self.batch_size)
        if self.window is not None and self.window not in WINDOWS:
            raise LabConfigError(f"window must be one of {sorted(WINDOWS)} or None, got {self.window!r}")
        if self.max_copies is not None:
            _positive("max_copies", self.max_copies)
            if not self.inject:
                raise LabConfigError(f"run {self.name!r}: max_copies needs inject=True")
        if self.window is not None and not self.inject:
            raise LabConfigError(f"run {self.name!r}: a window needs inject=True")
        if not 0 <= self.warmup_frac < 1:
            raise LabConfigError(f"warmup_frac must be in [0, 1), got {self.warmup_frac}")
        if self.lr <= 0:
            raise LabConfigError(f"lr must be > 0, got {self.lr}")

    @property
    def steps(self) -> int:
        """Optimizer steps: the token budget over tokens per step."""
        return max(1, self.tokens // (self.batch_size * self.model.context))

    def as_dict(self) -> dict:
        return asdict(self)
