"""Helper package of the memorization book: data registry, model layer, one module per chapter."""

__version__ = "0.1.0"
