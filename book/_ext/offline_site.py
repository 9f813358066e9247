"""The built site works offline and its pages load without JavaScript errors.

**MathJax from the site.** Equations render when the book is opened without
internet: MathJax is served from the built site instead of a CDN. The files
(MathJax 3.2.2's ``tex-chtml.js`` component and the CommonHTML web fonts it
loads) come from the npm package ``mathjax`` and are kept in
``book/vendor/mathjax/`` (its README says how to refresh them). They are copied
into ``_static/mathjax/`` of the HTML output when the builder starts, and
Sphinx's ``mathjax_path`` points there; myst-parser's MathJax 3 configuration
(which classes to process) applies unchanged.

(MathJax 2 from the PyPI package ``jupyter-server-mathjax`` was tried first: it
ships only the STIX-Web fonts, and pages with calligraphic or AMS symbols asked
for TeX fonts it does not have.)

**Alt text from captions.** A figure's image without alt text gets its caption
as alt text, so a screen reader (or a reader whose image failed to load) reads
what the figure shows.

**Each script once.** sphinx-thebe adds its inline configuration script once per
reading phase, so a page could hold ``const THEBE_JS_URL`` twice, a JavaScript
error on every page; each page keeps the first copy of a script only.
"""

from __future__ import annotations

import shutil
from pathlib import Path

MATHJAX_DIR = "mathjax"


def mathjax_static(srcdir: str | Path) -> Path:
    """The vendored MathJax folder of the book whose source root is ``srcdir``."""
    path = Path(srcdir) / "book" / "vendor" / "mathjax"
    if not (path / "tex-chtml.js").is_file():
        raise FileNotFoundError(f"no tex-chtml.js in {path}: see book/vendor/mathjax/README.md")
    return path


def _copy(app) -> None:
    if app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / MATHJAX_DIR
    shutil.copytree(mathjax_static(app.srcdir), target, dirs_exist_ok=True)


def _configure(app, config) -> None:
    config.mathjax_path = f"{MATHJAX_DIR}/tex-chtml.js"


def _dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        # the same inline script comes once with filename None and once with ''
        attributes = sorted(getattr(script, "attributes", {}).items())
        key = (getattr(script, "filename", script) or "", repr(attributes))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    scripts[:] = kept


def _alt_from_captions(app, doctree, docname) -> None:
    from docutils import nodes

    for figure in doctree.findall(nodes.figure):
        caption = next(iter(figure.findall(nodes.caption)), None)
        if caption is None:
            continue
        text = " ".join(caption.astext().split())
        for image in figure.findall(nodes.image):
            if not image.get("alt"):
                image["alt"] = text


def setup(app):
    app.connect("doctree-resolved", _alt_from_captions)
    app.connect("config-inited", _configure, priority=900)
    app.connect("builder-inited", _copy)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
