"""The memo of expensive pure computations (:func:`analysis.core.cache.memo`): a value is
computed once, read back equal, recomputed when any input of its key changes, and a
damaged file is recomputed with a warning that names it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.core import cache
from analysis.core.cache import MemoWarning, code_fingerprint, memo, memo_path, value_fingerprint


def counted(value):
    """A compute function that returns ``value`` and counts its calls."""
    calls = []

    def compute():
        calls.append(1)
        return value

    return compute, calls


def frame():
    out = pd.DataFrame({"x": [("a", "b"), ("c",)], "p": [0.25, 1.0], "n": [3, 4]})
    out.attrs["n"] = 2
    return out


def test_a_value_is_computed_once_and_read_back_equal():
    compute, calls = counted({"table": frame(), "rho": 0.5})
    first = memo("t", {"run": "r1"}, compute)
    again = memo("t", {"run": "r1"}, compute)
    assert calls == [1]
    pd.testing.assert_frame_equal(again["table"], frame())
    assert again["table"].attrs == {"n": 2}
    assert again["rho"] == first["rho"] == 0.5
    assert memo_path("t", {"run": "r1"}).is_file()


def test_a_changed_key_or_kind_recomputes():
    compute, calls = counted(1.5)
    memo("t", {"run": "r1", "docs": "d1"}, compute)
    memo("t", {"run": "r2", "docs": "d1"}, compute)
    memo("t", {"run": "r1", "docs": "d2"}, compute)
    memo("u", {"run": "r1", "docs": "d1"}, compute)
    memo("t", {"docs": "d1", "run": "r1"}, compute)  # the same key, in another order
    assert len(calls) == 4


def test_changed_code_recomputes(tmp_path, monkeypatch):
    source = tmp_path / "memo_probe_module.py"
    source.write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    compute, calls = counted(2.0)
    memo("t", {"k": 1}, compute, code=["memo_probe_module"])
    memo("t", {"k": 1}, compute, code=["memo_probe_module"])
    before = code_fingerprint("memo_probe_module")
    source.write_text("VALUE = 2\n")
    assert code_fingerprint("memo_probe_module") != before
    memo("t", {"k": 1}, compute, code=["memo_probe_module"])
    assert len(calls) == 2


def test_code_must_be_modules_with_a_source():
    with pytest.raises(ValueError, match="modules must be modules with a source file"):
        code_fingerprint("sys")


@pytest.mark.parametrize("damage", [b"", b"not a pickle", b"\x80\x05\x95garbage"])
def test_a_damaged_file_is_recomputed_with_a_warning_naming_it(damage):
    compute, calls = counted(frame())
    memo("t", {"run": "r1"}, compute)
    path = memo_path("t", {"run": "r1"})
    path.write_bytes(damage)
    with pytest.warns(MemoWarning, match="could not be read.*recomputing") as record:
        again = memo("t", {"run": "r1"}, compute)
    assert str(path) in str(record[0].message)
    assert len(calls) == 2
    pd.testing.assert_frame_equal(again, frame())
    # the file was replaced: the next call reads it, without a warning
    pd.testing.assert_frame_equal(memo("t", {"run": "r1"}, compute), frame())
    assert len(calls) == 2


def test_a_failed_computation_leaves_no_file():
    def fail():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        memo("t", {"run": "r1"}, fail)
    assert not memo_path("t", {"run": "r1"}).exists()
    assert not list(memo_path("t", {"run": "r1"}).parent.glob("*tmp*"))


def test_memo_writes_under_the_artifact_cache(isolated_cache):
    memo("t", {"run": "r1"}, lambda: 1)
    assert memo_path("t", {"run": "r1"}).parent == isolated_cache / "t"
    assert cache.cache_dir() == isolated_cache


def test_value_fingerprint_follows_content():
    a, b = frame(), frame()
    assert value_fingerprint(a) == value_fingerprint(b)
    b.loc[1, "p"] = 0.5
    assert value_fingerprint(a) != value_fingerprint(b)
    assert value_fingerprint(a) != value_fingerprint(a.rename(columns={"p": "q"}))
    assert value_fingerprint(a) != value_fingerprint(a.iloc[::-1])
    assert value_fingerprint(np.arange(3)) != value_fingerprint(np.arange(3).astype(float))
    assert value_fingerprint([1, "a", None]) == value_fingerprint([1, "a", None])
    assert value_fingerprint([1, 2]) != value_fingerprint((1, 2))
    assert value_fingerprint({"a": 1, "b": 2}) == value_fingerprint({"a": 1, "b": 2})
    # a dict's order is part of it: a function's output may follow it
    assert value_fingerprint({"a": 1, "b": 2}) != value_fingerprint({"b": 2, "a": 1})
    assert value_fingerprint(np.int64(3)) == value_fingerprint(3)


def test_value_fingerprint_sees_every_cell_of_a_column_of_lists():
    ids = pd.DataFrame({"ids": [list(range(k, k + 2000)) for k in range(3)], "word": ["a", "b", "c"]})
    changed = ids.copy()
    changed.at[1, "ids"] = [*range(1, 1000), -1, *range(1001, 2001)]  # one id, far inside the list
    assert value_fingerprint(ids) != value_fingerprint(changed)
    as_tuples = ids.assign(ids=[tuple(x) for x in ids["ids"]])
    assert value_fingerprint(ids) != value_fingerprint(as_tuples)
    arrays = ids.assign(ids=[np.arange(k, k + 2000) for k in range(3)])
    other = ids.assign(ids=[np.arange(k, k + 2000) + (np.arange(2000) == 1500) for k in range(3)])
    assert value_fingerprint(arrays) != value_fingerprint(other)  # str() of an array would hide this
    assert value_fingerprint(arrays) == value_fingerprint(ids.assign(ids=[np.arange(k, k + 2000)
                                                                          for k in range(3)]))
    vocab = {"the": 0, "cat": 1}
    assert value_fingerprint(vocab) != value_fingerprint({"the": 0, "cat": 2})
    assert value_fingerprint(vocab) != value_fingerprint({"the": 0, "cat": "1"})


def test_value_fingerprint_names_what_it_cannot_hash():
    with pytest.raises(TypeError, match="cannot hash a value of type object"):
        value_fingerprint(object())
