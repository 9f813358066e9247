"""The browser check (scripts/check_site.py) fails on each kind of broken page.

Each case is a one-page site written here, broken on purpose in one way, opened in
headless Chromium; a sound page passes. The smoke book itself is checked in
tests/test_chapters.py. Needs Debian's chromium (``nox -s site`` installs it).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from check_site import check_site, find_browser, have_browser  # noqa: E402
from subset_cjk_font import FONT, book_chars, vendored_chars  # noqa: E402

pytestmark = pytest.mark.skipif(not have_browser(),
                                reason="no Chromium: apt-get install -y chromium (nox -s site installs it)")

EXPLORER_JS = """
const box = document.getElementById('ex');
const sel = box.querySelector('select.pe-phrase');
const out = box.querySelector('.pe-out');
function show() { out.textContent = CHANGE; }
sel.addEventListener('change', show); show();
"""


def page(body: str, head: str = "") -> str:
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'>{head}</head><body>{body}</body></html>"


def explorer(change: str) -> str:
    return ("<div id='ex' class='phrase-explorer'><select class='pe-phrase'><option>a</option>"
            "<option>b</option></select><div class='pe-out'></div></div>"
            f"<script>{EXPLORER_JS.replace('CHANGE', change)}</script>")


PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082")

CASES = {
    "sound": (page("<p>Text</p><figure><img src='ok.png' alt='A dot.'><figcaption>A dot.</figcaption>"
                   "</figure>" + explorer("sel.value")), None),
    "broken_download": (page("<a href='chapter.ipynb'>Download</a>"), "notebook download does not load"),
    "no_alt": (page("<figure><img src='ok.png'><figcaption>A dot.</figcaption></figure>"),
               "without alt text"),
    "js_error": (page("<script>undefinedFunction()</script>"), "JavaScript error"),
    "broken_image": (page("<img src='missing.png'>"), "image does not load"),
    "raw_math": (page("<p>An equation <span class='math'>\\(x^2\\)</span></p>"), "not rendered"),
    "placeholder": (page("<p>The rate is {glue:text}`rate`.</p>"), "glue placeholder"),
    "static_explorer": (page(explorer("'always the same'")), "controls do not change"),
    "external": (page("<p>x</p>", "<script src='https://cdn.example.org/lib.js'></script>"),
                 "request outside the site"),
}

# Chinese (the phrases chapter's prompt and a phrase), in a Latin font stack; the site's
# copy of the book's vendored CJK font (book/vendor/noto-sans-sc/) is cjk.woff2
CHINESE = "<p>续写句子：<code>实行宏观政策要稳</code>, and Latin text.</p>"
CJK_FONT = ("<style>@font-face {font-family: 'Noto Sans SC Book'; src: url(cjk.woff2) format('woff2');"
            " unicode-range: U+3000-9FFF, U+FF00-FFEF;}"
            " body {font-family: sans-serif, 'Noto Sans SC Book';}"
            " code {font-family: monospace, 'Noto Sans SC Book';}</style>")
CJK_CASES = {
    # no CJK font at all: every character an empty box
    "cjk_tofu": (page(CHINESE), "render as empty boxes"),
    # the vendored font, and a character it was not cut to (U+9F98, in no page of the book)
    "cjk_missing": (page(CHINESE + "<p>\u9f98</p>", CJK_FONT), "1 of 14 distinct CJK characters"),
    "cjk_sound": (page(CHINESE, CJK_FONT), None),
}


def system_cjk_font() -> bool:
    """Whether this machine has a CJK font of its own (fontconfig), which would stand in
    for a page's missing one: the tofu cases cannot fail there."""
    fc_list = shutil.which("fc-list")
    found = fc_list and subprocess.run([fc_list, ":lang=zh"], capture_output=True, text=True).stdout
    return bool(found and found.strip())


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = {}
    for name, (html, _) in {**CASES, **CJK_CASES}.items():
        site = tmp_path_factory.mktemp(name)
        (site / "page.html").write_text(html)
        (site / "ok.png").write_bytes(PNG)
        shutil.copy(FONT, site / "cjk.woff2")
        reports, failures = check_site(site, screenshots=site / "shots", progress=False)
        out[name] = (reports, failures, site)
    return out


@pytest.mark.parametrize("name", [n for n, (_, expect) in CASES.items() if expect])
def test_a_broken_page_fails_the_check(results, name):
    _, failures, _ = results[name]
    expected = CASES[name][1]
    assert failures and all(f.startswith("page.html: ") for f in failures)
    assert any(expected in f for f in failures), failures


def test_a_sound_page_passes_and_is_photographed(results):
    reports, failures, site = results["sound"]
    assert failures == []
    assert reports[0].explorers == 1
    assert (site / "shots" / "page.png").stat().st_size > 1000


@pytest.mark.skipif(system_cjk_font(), reason="this machine has a CJK font (fc-list :lang=zh)")
@pytest.mark.parametrize("name", [n for n, (_, expect) in CJK_CASES.items() if expect])
def test_cjk_text_without_a_glyph_fails_the_check(results, name):
    """Chinese with no font that has its glyphs renders as empty boxes ("tofu"): one
    line for the page, how many characters, and some of them."""
    _, failures, _ = results[name]
    assert len(failures) == 1 and failures[0].startswith("page.html: "), failures
    assert CJK_CASES[name][1] in failures[0] and "render as empty boxes" in failures[0]
    if name == "cjk_missing":
        assert "(e.g. \u9f98)" in failures[0]
    else:
        assert "13 of 13 distinct CJK characters (13 in the text)" in failures[0]


def test_cjk_text_in_the_vendored_font_passes(results):
    reports, failures, site = results["cjk_sound"]
    assert failures == []
    assert reports[0].cjk == 13 and reports[0].cjk_boxes == []
    assert (site / "shots" / "page__cjk.png").stat().st_size > 500  # a picture of the Chinese


def test_the_vendored_cjk_font_covers_the_book():
    """Every CJK character of the book is in the vendored subset: rerun
    scripts/subset_cjk_font.py when a chapter's text brings new ones."""
    missing = sorted(set(book_chars()) - set(vendored_chars()))
    assert not missing, f"{len(missing)} CJK characters not in {FONT.name}: {''.join(missing[:40])}"


def test_the_search_check_fails_on_a_site_without_results(tmp_path):
    (tmp_path / "page.html").write_text(page("<p>Text</p>"))
    (tmp_path / "search.html").write_text(page(
        "<div id='search-results'><p class='search-summary'>Found 0 pages</p><ul class='search'></ul></div>"))
    _, failures = check_site(tmp_path, search="memorization", progress=False)
    assert failures == ["search.html: no result for 'memorization'"]


def test_find_browser_names_the_package_when_none_is_found(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="apt-get install -y chromium"):
        find_browser("/nonexistent/chromium")
