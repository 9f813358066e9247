"""The words the predicting chapter's sentences share (:mod:`analysis.predicting.text`,
:mod:`analysis.predicting.text_claims`): a list in words and copy counts."""

from __future__ import annotations


def and_list(items) -> str:
    """Items in words: ``a``, ``a and b``, ``a, b and c`` (empty text for none)."""
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else ""


def _copies_text(c) -> str:
    return f"{int(c)} {'copy' if int(c) == 1 else 'copies'}"


def _levels_text(levels) -> str:
    """``"1 copy"``, ``"4 and 16 copies"``."""
    levels = [int(c) for c in levels]
    return _copies_text(levels[0]) if len(levels) == 1 else f"{and_list(levels)} copies"
