"""The built site works offline and its pages load without JavaScript errors.

**MathJax from the site.** Equations render when the book is opened without
internet: MathJax is served from the built site instead of a CDN.

The MathJax files (2.7, with its STIX-Web fonts) come from the PyPI package
``jupyter-server-mathjax``, the copy Jupyter Server serves offline. They are
copied into ``_static/mathjax/`` of the HTML output when the builder starts, and
Sphinx's ``mathjax_path`` points there. MathJax 2 reads its configuration from
``mathjax2_config`` (the package's combined TeX-AMS configuration, HTML-CSS output, and
the ``\\(…\\)`` and ``\\[…\\]`` delimiters Sphinx writes).

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
MATHJAX2_CONFIG = {
    # the package's one combined configuration, with the TeX input and HTML-CSS output
    # code built in (its jax folders hold no separate config.js to load piece by piece)
    "config": ["TeX-AMS-MML_HTMLorMML-full.js"],
    # myst-nb marks sections ``tex2jax_ignore``; Sphinx's math elements (class ``math``) are processed anyway
    "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]], "processEscapes": True,
                "processClass": "math|output_area", "ignoreClass": "tex2jax_ignore|mathjax_ignore|document"},
    # the package ships the STIX-Web fonts only. MathJax probes web-font support with
    # a font at about:blank, which Chromium refuses as a cross-origin request (a
    # console error on every page with math); an empty data: URL probes the same way
    "HTML-CSS": {"availableFonts": [], "preferredFont": None, "webFont": "STIX-Web",
                 "imageFont": None, "linebreaks": {"automatic": True},
                 "styles": {"@font-face": {"font-family": "MathJax_Blank", "src": "url('data:,')"}}},
    "messageStyle": "none",
}


def mathjax_static() -> Path:
    """The folder of MathJax files that ``jupyter-server-mathjax`` ships."""
    import jupyter_server_mathjax

    path = Path(jupyter_server_mathjax.__file__).parent / "static"
    if not (path / "MathJax.js").is_file():
        raise FileNotFoundError(f"no MathJax.js in {path}: reinstall jupyter-server-mathjax")
    return path


def _copy(app) -> None:
    if app.builder.format != "html":
        return
    shutil.copytree(mathjax_static(), Path(app.outdir) / "_static" / MATHJAX_DIR, dirs_exist_ok=True)


def _configure(app, config) -> None:
    config.mathjax_path = f"{MATHJAX_DIR}/MathJax.js"
    config.mathjax2_config = MATHJAX2_CONFIG
    # myst-parser would add a MathJax 3 configuration (``window.MathJax = ...``), which
    # MathJax 2 also reads as its own; the classes it sets are in tex2jax above
    config.myst_update_mathjax = False


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
