"""Reasoning documents: GSM8K-style worked arithmetic problems.

Each problem comes from one of :data:`N_PROBLEM_TEMPLATES` templates with random
names and numbers (:func:`problem_text`); its worked solution writes every
calculation GSM8K's way (``a * b = <<a*b=c>>c``) and ends in ``#### answer``.
The distributional chapter draws its own test problems from the same templates.
"""

from __future__ import annotations

import json

import numpy as np

from analysis.lab.config import CorpusConfig, LabConfigError
from analysis.lab.corpus.common import corpus_rng, normalise, pick, shingles
from analysis.lab.corpus.documents import Document

FIRST_NAMES = (
    ("Amara", "she"), ("Bilal", "he"), ("Chiara", "she"), ("Dmitri", "he"), ("Elif", "she"),
    ("Farid", "he"), ("Greta", "she"), ("Hiroshi", "he"), ("Ines", "she"), ("Jonas", "he"),
    ("Keziah", "she"), ("Lorenzo", "he"), ("Maya", "she"), ("Nikolai", "he"), ("Oona", "she"),
    ("Pavel", "he"), ("Quinn", "she"), ("Rafael", "he"), ("Saanvi", "she"), ("Tomas", "he"),
    ("Ulla", "she"), ("Viktor", "he"), ("Wanjiru", "she"), ("Xavier", "he"), ("Yara", "she"),
    ("Zoltan", "he"), ("Anouk", "she"), ("Bruno", "he"), ("Carmen", "she"), ("Desmond", "he"),
    ("Esther", "she"), ("Felix", "he"), ("Giulia", "she"), ("Hamid", "he"), ("Ingrid", "she"),
    ("Jasper", "he"), ("Kalani", "she"), ("Leon", "he"), ("Mirela", "she"), ("Nathaniel", "he"),
)
LAST_NAMES = (
    "Abernathy", "Baptiste", "Castellanos", "Dervishi", "Eriksen", "Fairweather", "Gallagher",
    "Halvorsen", "Ibarra", "Jablonski", "Kowalczyk", "Lindqvist", "Mbeki", "Nakashima", "Okonkwo",
    "Petrakis", "Quintero", "Rasmussen", "Szabo", "Thorvaldsen", "Urquhart", "Vasquez", "Wojcik",
    "Yamaguchi", "Zeller", "Achterberg", "Brannigan", "Cavendish", "Delacroix", "Esposito",
    "Fontaine", "Grimaldi", "Hollister", "Iversen", "Kaczmarek", "Lachance", "Moravec", "Novak",
    "Oyelaran", "Pemberton",
)
_ITEMS = ("notebook", "pencil", "candle", "mug", "scarf", "puzzle", "kite", "lamp", "basket", "towel")
_THINGS = ("stickers", "marbles", "seashells", "stamps", "postcards", "buttons", "coins", "beads")
_VEHICLES = ("train", "bus", "truck", "ferry", "van", "cyclist")
_GIFTS = ("bicycle", "guitar", "watch", "backpack", "telescope", "camera")
_FOODS = ("cookies", "muffins", "pies", "rolls", "tarts", "pretzels")
_CROPS = ("tomatoes", "peppers", "cabbages", "sunflowers", "beans", "onions")
_FRACTIONS = ((2, "Half"), (3, "A third"), (4, "A quarter"), (5, "A fifth"))

#: what one template returns: question, solution lines, answer, the numbers drawn
Problem = tuple[str, list[str], int, dict]


def _calc(a, op: str, b, result) -> str:
    return f"{a} {op} {b} = <<{a}{op}{b}={result}>>{result}"


def _between(r: np.random.Generator, lo: int, hi: int) -> int:
    return int(r.integers(lo, hi + 1))


def _shopping(name: str, pron: str, r: np.random.Generator) -> Problem:
    i1, i2 = r.choice(len(_ITEMS), size=2, replace=False)
    a, p, b, q = _between(r, 2, 12), _between(r, 2, 25), _between(r, 2, 12), _between(r, 2, 25)
    x, y = a * p, b * q
    question = (f"{name} buys {a} {_ITEMS[i1]}s for ${p} each and {b} {_ITEMS[i2]}s for ${q} each. "
                f"How much money does {pron} spend in all?")
    steps = [f"The {_ITEMS[i1]}s cost {_calc(a, '*', p, x)} dollars.",
             f"The {_ITEMS[i2]}s cost {_calc(b, '*', q, y)} dollars.",
             f"In all {pron} spends {_calc(x, '+', y, x + y)} dollars."]
    return question, steps, x + y, {"a": a, "p": p, "b": b, "q": q}


def _gives_and_buys(name: str, pron: str, r: np.random.Generator) -> Problem:
    thing = pick(r, _THINGS)
    friend = pick(r, [n for n, _ in FIRST_NAMES if n != name])
    a, c = _between(r, 20, 150), _between(r, 3, 60)
    b = _between(r, 2, a - 1)
    question = (f"{name} has {a} {thing}. {pron.capitalize()} gives {b} of them to {friend} and then buys "
                f"{c} more. How many {thing} does {name} have now?")
    steps = [f"After giving some away {pron} has {_calc(a, '-', b, a - b)} {thing}.",
             f"After buying more {pron} has {_calc(a - b, '+', c, a - b + c)} {thing}."]
    return question, steps, a - b + c, {"a": a, "b": b, "c": c}


def _travel(name: str, pron: str, r: np.random.Generator) -> Problem:
    vehicle = pick(r, _VEHICLES)
    s, h1, t, h2 = _between(r, 8, 70), _between(r, 2, 9), _between(r, 8, 70), _between(r, 2, 9)
    question = (f"A {vehicle} travels at {s} miles per hour for {h1} hours and then at {t} miles "
                f"per hour for {h2} hours. How many miles does it travel altogether?")
    steps = [f"First it covers {_calc(s, '*', h1, s * h1)} miles.",
             f"Then it covers {_calc(t, '*', h2, t * h2)} miles.",
             f"Altogether it travels {_calc(s * h1, '+', t * h2, s * h1 + t * h2)} miles."]
    return question, steps, s * h1 + t * h2, {"s": s, "h1": h1, "t": t, "h2": h2}


def _savings(name: str, pron: str, r: np.random.Generator) -> Problem:
    gift = pick(r, _GIFTS)
    a, w = _between(r, 5, 60), _between(r, 3, 20)
    b = _between(r, 1, a * w - 1)
    question = (f"{name} saves ${a} every week for {w} weeks. Then {pron} spends ${b} on a {gift}. "
                f"How many dollars does {pron} have left?")
    steps = [f"{pron.capitalize()} saves {_calc(a, '*', w, a * w)} dollars.",
             f"After buying the {gift} {pron} has {_calc(a * w, '-', b, a * w - b)} dollars left."]
    return question, steps, a * w - b, {"a": a, "w": w, "b": b}


def _discount(name: str, pron: str, r: np.random.Generator) -> Problem:
    item = pick(r, _ITEMS)
    d = pick(r, (10, 20, 25, 30, 40, 50))
    p = 20 * _between(r, 1, 30)
    off = p * d // 100
    question = (f"A {item} normally costs ${p}. This week the shop takes {d}% off the price. "
                f"How much does the {item} cost this week?")
    steps = [f"The discount is {p} * {d} / 100 = <<{p}*{d}/100={off}>>{off} dollars.",
             f"The {item} costs {_calc(p, '-', off, p - off)} dollars this week."]
    return question, steps, p - off, {"p": p, "d": d}


def _sharing(name: str, pron: str, r: np.random.Generator) -> Problem:
    food = pick(r, _FOODS)
    f, each, k = _between(r, 2, 9), _between(r, 2, 12), _between(r, 1, 10)
    n = f * each + k
    poss = "her" if pron == "she" else "his"
    question = (f"{name} bakes {n} {food}. {pron.capitalize()} keeps {k} for {poss} family and shares the "
                f"rest equally among {f} friends. How many {food} does each friend get?")
    steps = [f"{pron.capitalize()} shares {_calc(n, '-', k, n - k)} {food}.",
             f"Each friend gets {_calc(n - k, '/', f, each)} {food}."]
    return question, steps, each, {"n": n, "k": k, "f": f}


def _wages(name: str, pron: str, r: np.random.Generator) -> Problem:
    h, d, w = _between(r, 2, 10), _between(r, 2, 20), _between(r, 8, 40)
    question = (f"{name} works {h} hours a day for {d} days and is paid ${w} per hour. "
                f"How much does {pron} earn in total?")
    steps = [f"{pron.capitalize()} works {_calc(h, '*', d, h * d)} hours.",
             f"{pron.capitalize()} earns {_calc(h * d, '*', w, h * d * w)} dollars."]
    return question, steps, h * d * w, {"h": h, "d": d, "w": w}


def _club(name: str, pron: str, r: np.random.Generator) -> Problem:
    den, frac = pick(r, _FRACTIONS)
    n = den * _between(r, 4, 20)
    walk = n // den
    m = _between(r, 1, n - walk - 1)
    question = (f"There are {n} students in a school club. {frac} of them walk to school and {m} of the "
                f"others take the bus. The rest ride bikes. How many students ride bikes?")
    steps = [f"{_calc(n, '/', den, walk)} students walk.",
             f"That leaves {_calc(n, '-', walk, n - walk)} students.",
             f"So {_calc(n - walk, '-', m, n - walk - m)} students ride bikes."]
    return question, steps, n - walk - m, {"n": n, "den": den, "m": m}


def _farm(name: str, pron: str, r: np.random.Generator) -> Problem:
    crop = pick(r, _CROPS)
    rows, per = _between(r, 3, 25), _between(r, 4, 30)
    lost = _between(r, 1, rows * per - 1)
    question = (f"A farmer plants {rows} rows of {crop} with {per} plants in each row. {lost} of the plants "
                f"do not survive the frost. How many plants are left?")
    steps = [f"The farmer plants {_calc(rows, '*', per, rows * per)} plants.",
             f"There are {_calc(rows * per, '-', lost, rows * per - lost)} plants left."]
    return question, steps, rows * per - lost, {"rows": rows, "per": per, "lost": lost}


#: the templates in the order of their ``kind``; any kind past the last but one is the last
_TEMPLATES = (_shopping, _gives_and_buys, _travel, _savings, _discount, _sharing, _wages, _club, _farm)
N_PROBLEM_TEMPLATES = len(_TEMPLATES)


def problem_text(kind: int, r: np.random.Generator) -> Problem:
    """One worked problem of template ``kind``: question, solution lines, answer, numbers.

    Every template first draws a name (and its pronoun) from :data:`FIRST_NAMES`
    with ``r``, then its own words and numbers.
    """
    name, pron = FIRST_NAMES[int(r.integers(len(FIRST_NAMES)))]
    template = _TEMPLATES[kind] if 0 <= kind < len(_TEMPLATES) - 1 else _TEMPLATES[-1]
    return template(name, pron, r)


def reasoning_documents(config: CorpusConfig, gsm8k_questions: set, protected: set) -> list[Document]:
    """``n_problems`` distinct worked problems, none a GSM8K test question (``gsm8k_questions``,
    lower-cased) and none sharing a 12-word shingle with ``protected``; each trained once."""
    rng = corpus_rng(config.seed, "reasoning")
    docs, seen = [], set()
    tries = 0
    while len(docs) < config.n_problems:
        tries += 1
        if tries > 50 * config.n_problems + 1000:
            raise LabConfigError(
                f"n_problems={config.n_problems}: could not generate that many distinct problems")
        kind = int(rng.integers(N_PROBLEM_TEMPLATES))
        question, steps, answer, numbers = problem_text(kind, rng)
        question = normalise(question)
        if question in seen or question.lower() in gsm8k_questions:
            continue
        text = normalise(" ".join([question, *steps, f"#### {answer}"]))
        if any(s in protected for s in shingles(text)):
            continue
        seen.add(question)
        docs.append(Document(f"reasoning-{len(docs):04d}", "reasoning", "generated", text, 1,
                             {"template": kind, "question": question, "numbers": json.dumps(numbers),
                              "answer": str(answer)}))
    return docs
