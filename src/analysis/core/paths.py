"""Where the repository's own files are: one home for every path the package reads."""

from __future__ import annotations

from pathlib import Path

#: the repository root (the book root), two folders above ``src/analysis``
REPO_ROOT = Path(__file__).resolve().parents[3]
#: the small tables transcribed from the sources, and the data registry
DATA_DIR = REPO_ROOT / "data"
#: each chapter's glued values and claims from its last default execution
RESULTS_DIR = REPO_ROOT / "results"
