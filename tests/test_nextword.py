"""The next-word probe (Size chapter) on a scripted model, and the gap interval."""

import numpy as np
import pandas as pd
import pytest

from analysis import nextword
from analysis.core.cache import QueryCache
from analysis.models import Answer, Model, ModelError
from analysis.size.method_groups import group_gap
from analysis.size.method_probe import accuracy_table, position_table

SAMPLES = pd.DataFrame(
    {
        "text_id": ["a", "a", "b"],
        "group": ["popular", "popular", "baseline"],
        "prefix_len": [2, 2, 2],
        "position": [3, 5, 4],
        "prefix": ["to be", "or not", "the cat"],
        "target": ["or", "to", "sat"],
    }
)
TEMPLATES = pd.DataFrame(
    {
        "template_id": [1, 2],
        "system": ["Say one word.", ""],
        "template": ['"{prefix}"', "Next word after {prefix}?"],
    }
)


class Echo(Model):
    backend = "echo"

    def __init__(self, replies, is_chat, **kw):
        super().__init__("echo", **kw)
        self.replies, self.is_chat, self.seen = replies, is_chat, []

    def _generate(self, requests):
        for i, r in enumerate(requests):
            self.seen.append(r.prompt)
            key = r.prompt if isinstance(r.prompt, str) else r.prompt[-1]["content"]
            reply = self.replies.get(key, "nothing")
            yield i, (Answer(None, error="HTTP 500") if reply is None else Answer(reply))


def test_completion_mode_sends_the_raw_prefix(tmp_path):
    m = Echo(
        {"to be": " or not to", "or not": " to be", "the cat": " ran"},
        False,
        cache=QueryCache(tmp_path / "q.sqlite"),
    )
    out = nextword.probe(m, SAMPLES)
    assert m.seen == ["to be", "or not", "the cat"]
    assert out["template_id"].tolist() == [0, 0, 0] and out["mode"].eq("completion").all()
    acc = accuracy_table(out).set_index("text_id")["acc"]
    assert acc["a"] == 1.0 and acc["b"] == 0.0


def test_chat_mode_any_template_counts_and_errors_are_dropped(tmp_path):
    replies = {
        '"to be"': "Or.",
        "Next word after to be?": "not",
        '"or not"': "nope",
        "Next word after or not?": None,  # an API error
        '"the cat"': "sat",
        "Next word after the cat?": "sat",
    }
    m = Echo(replies, True, cache=QueryCache(tmp_path / "q.sqlite"))
    out = nextword.probe(m, SAMPLES, TEMPLATES)
    assert len(out) == 6 and sorted(out["template_id"].unique()) == [1, 2]
    assert m.seen[0] == [
        {"role": "system", "content": "Say one word."},
        {"role": "user", "content": '"to be"'},
    ]
    assert m.seen[3] == [{"role": "user", "content": "Next word after to be?"}]  # empty system: none sent
    pos = position_table(out).set_index("position")["correct"]
    assert pos[3] and not pos[5] and pos[4]  # template 1 right at 3; 5 wrong (its error row dropped)


def test_chat_mode_without_templates_is_an_error(tmp_path):
    with pytest.raises(ModelError, match="templates"):
        nextword.probe(Echo({}, True, cache=QueryCache(tmp_path / "q.sqlite")), SAMPLES)
    with pytest.raises(ModelError, match="mode must be one of"):
        nextword.probe(Echo({}, True, cache=QueryCache(tmp_path / "q.sqlite")), SAMPLES, mode="guess")


def test_group_gap_is_popular_minus_baseline_with_a_text_bootstrap():
    acc = pd.DataFrame(
        {
            "model": "m",
            "group": ["popular"] * 4 + ["baseline"] * 2,
            "text_id": ["p1", "p1", "p2", "p2", "b1", "b1"],
            "prefix_len": [4, 8] * 3,
            "acc": [0.5, 0.7, 0.3, 0.5, 0.1, 0.3],
        }
    )
    gap = group_gap(acc, n_boot=500, seed=1).iloc[0]
    assert gap["popular"] == pytest.approx(0.5) and gap["baseline"] == pytest.approx(0.2)
    assert gap["gap"] == pytest.approx(0.3)
    # one baseline text: the bootstrap varies only the popular side, whose text means are 0.6 and 0.4
    assert 0.2 - 1e-9 <= gap["ci_lo"] <= gap["gap"] <= gap["ci_hi"] <= 0.4 + 1e-9
    assert np.isclose(gap["ci_lo"], 0.2) and np.isclose(gap["ci_hi"], 0.4)
