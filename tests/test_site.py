"""The browser check (scripts/check_site.py) fails on each kind of broken page.

Each case is a one-page site written here, broken on purpose in one way, opened in
headless Chromium; a sound page passes. The smoke book itself is checked in
tests/test_chapters.py. Needs Debian's chromium (``nox -s site`` installs it).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from check_site import check_site, find_browser, have_browser  # noqa: E402

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


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = {}
    for name, (html, _) in CASES.items():
        site = tmp_path_factory.mktemp(name)
        (site / "page.html").write_text(html)
        (site / "ok.png").write_bytes(PNG)
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
