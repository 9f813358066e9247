"""The Phrases chapter's one error class."""


class PhrasesError(ValueError):
    """A phrase table, completions frame or setting the chapter cannot score
    (a missing column, an unknown phrase id, an unknown mode)."""
