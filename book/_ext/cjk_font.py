"""The book's CJK text renders on any reader's machine, with or without a CJK font.

The phrases chapter quotes Chinese. The site serves its own CJK font: Noto Sans SC
cut to exactly the characters the book uses (``scripts/subset_cjk_font.py`` writes
it, with its provenance, into ``book/vendor/noto-sans-sc/``; SIL OFL 1.1). When the
HTML builder starts, the font, its CSS and its licence are copied into
``_static/noto-sans-sc/`` of the output and the CSS is linked from every page: an
``@font-face`` limited to the CJK blocks by ``unicode-range`` (a page without CJK
never downloads the font), appended to the theme's font stacks (Latin text keeps the
theme's fonts). ``scripts/check_site.py`` fails a page whose CJK characters render
as empty boxes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

FONT_DIR = "noto-sans-sc"
CSS = f"{FONT_DIR}/noto-sans-sc.css"
#: the files the site serves: the font, its CSS, and the licence that goes with the font
SERVED = ("noto-sans-sc-book.woff2", "noto-sans-sc.css", "LICENSE")


def font_static(srcdir: str | Path) -> Path:
    """The vendored font folder of the book whose source root is ``srcdir``."""
    path = Path(srcdir) / "book" / "vendor" / FONT_DIR
    missing = [name for name in SERVED if not (path / name).is_file()]
    if missing:
        raise FileNotFoundError(f"no {', '.join(missing)} in {path}: see scripts/subset_cjk_font.py")
    return path


def _copy(app) -> None:
    if app.builder.format != "html":
        return
    source = font_static(app.srcdir)
    target = Path(app.outdir) / "_static" / FONT_DIR
    target.mkdir(parents=True, exist_ok=True)
    for name in SERVED:
        shutil.copyfile(source / name, target / name)


def setup(app):
    app.connect("builder-inited", _copy)
    app.add_css_file(CSS)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
