"""Open every page of the built book in headless Chromium and check it as a reader meets it.

    python scripts/check_site.py [_build/html] [--screenshots _build/screenshots]
                                 [--search WORD] [--browser /usr/bin/chromium]

The site is served from a local HTTP server on 127.0.0.1. For each page the check
records, and fails on:

* a JavaScript error (a console message of type error, or an uncaught exception);
* a request outside the site (a CDN script, a web font), except the links a
  reader clicks;
* math left unrendered: a page with math elements must have MathJax output
  for each of them and no raw ``\\(`` in its visible text;
* an image that does not load, or a figure's image without alt text;
* a glue placeholder left in the text (``{glue:``);
* on a page with the phrases explorer, a control that does not change what it
  shows;
* a notebook download link (``.ipynb``) that does not load;
* CJK text (Chinese, Japanese kana, CJK punctuation, fullwidth forms) drawn as
  empty boxes ("tofu") because no font the page can use has its glyphs: each
  distinct character of the page's text is drawn on a canvas in its element's
  computed font (after ``document.fonts.load``) and compared with a code point no
  font has (U+10FFFD), which Chromium draws as the missing-glyph box; a character
  drawn the same is a box. The book's vendored font is book/vendor/noto-sans-sc/.

It saves a full-page screenshot of each page under ``--screenshots`` (and, for a page
with CJK text, a picture of the element with the most of it, ``*__cjk.png``) and, with
``--search``, checks that the site's search page finds the word. It exits
non-zero with one line per failure. Chromium comes from Debian's ``chromium``
package (``apt-get install -y chromium``), driven by Playwright.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

SKIP_DIRS = {"_static", "_sources", "_images", "_sphinx_design_static"}
SKIP_PAGES = {"search.html", "genindex.html"}
MATH_TIMEOUT_MS = 30_000
#: CJK characters checked for a glyph, per page, at most; and how many a failure names
CJK_LIMIT = 4000
CJK_EXAMPLES = 8


@dataclass
class PageReport:
    page: str
    errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    math: int = 0
    rendered: int = 0
    raw_math: bool = False
    broken_images: list[str] = field(default_factory=list)
    no_alt: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)
    broken_downloads: list[str] = field(default_factory=list)
    placeholders: int = 0
    explorers: int = 0
    explorers_static: list[str] = field(default_factory=list)
    cjk: int = 0  # distinct CJK characters in the page's text (each drawn in each font it is set in)
    cjk_boxes: list[str] = field(default_factory=list)  # those drawn as missing-glyph boxes
    cjk_box_count: int = 0  # how many times they occur in the text

    def failures(self) -> list[str]:
        out = [f"{self.page}: JavaScript error: {e}" for e in self.errors]
        out += [f"{self.page}: request outside the site: {u}" for u in self.external]
        if self.math and self.rendered < self.math:
            out.append(f"{self.page}: {self.math - self.rendered} of {self.math} math elements not rendered")
        if self.raw_math:
            out.append(f"{self.page}: raw LaTeX (\\( ... \\)) in the visible text")
        out += [f"{self.page}: image does not load: {src}" for src in self.broken_images]
        out += [f"{self.page}: figure image without alt text: {src}" for src in self.no_alt]
        out += [f"{self.page}: notebook download does not load: {u}" for u in self.broken_downloads]
        if self.placeholders:
            out.append(f"{self.page}: {self.placeholders} glue placeholder(s) left in the text")
        out += [f"{self.page}: explorer {e}: its controls do not change what it shows"
                for e in self.explorers_static]
        if self.cjk_boxes:
            examples = " ".join(self.cjk_boxes[:CJK_EXAMPLES])
            out.append(f"{self.page}: {len(self.cjk_boxes)} of {self.cjk} distinct CJK characters "
                       f"({self.cjk_box_count} in the text) render as empty boxes, no font has their "
                       f"glyphs (e.g. {examples}): see book/vendor/noto-sans-sc/README.md")
        return out


def pages(site: Path) -> list[Path]:
    """Every HTML page of the site, except Sphinx's own index and search pages and
    redirects (the root ``index.html`` of a Jupyter Book)."""
    return sorted(p for p in site.rglob("*.html")
                  if not SKIP_DIRS & set(p.relative_to(site).parts) and p.name not in SKIP_PAGES
                  and 'http-equiv="refresh"' not in p.read_text(errors="replace")[:2000].lower())


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


#: the Chromium executables looked for on PATH, in order
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def have_browser() -> bool:
    """Whether a Chromium is on PATH."""
    return any(shutil.which(b) for b in BROWSERS)


def find_browser(explicit: str | None = None) -> str:
    for candidate in (explicit, *BROWSERS):
        if candidate and (path := shutil.which(candidate) or (Path(candidate).is_file() and candidate)):
            return str(path)
    raise SystemExit("no Chromium found: install Debian's chromium (apt-get install -y chromium) "
                     "or pass --browser PATH")


# Sphinx's math elements that hold MathJax 3 output
_RENDERED = ("[...document.querySelectorAll('span.math, div.math')]"
             ".filter(e => e.querySelector('mjx-container'))")
_MATH_DONE = """() => {
  if (!window.MathJax || !window.MathJax.startup) return true;  // no MathJax loaded: nothing to wait for
  return RENDERED.length >= document.querySelectorAll('span.math, div.math').length;
}"""

_PAGE_FACTS = """() => {
  if (!document.body) return {math: 0, rendered: 0, raw: false, placeholders: 0, images: [], noAlt: []};
  const math = document.querySelectorAll('span.math, div.math').length;
  const rendered = RENDERED.length;
  const text = document.body.innerText;
  const images = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src);
  const noAlt = [...document.querySelectorAll('figure img')].filter(i => !i.alt.trim()).map(i => i.src);
  return {math, rendered, raw: text.includes('\\\\(') || text.includes('\\\\['),
          placeholders: (text.match(/\\{glue:/g) || []).length, images, noAlt};
}"""

_EXPLORERS = """async () => {
  const out = [];
  for (const box of document.querySelectorAll('.phrase-explorer')) {
    const view = box.querySelector('.pe-out');
    let changed = true;
    for (const cls of ['pe-phrase', 'pe-model']) {
      const sel = box.querySelector('select.' + cls);
      if (!sel || sel.options.length < 2) continue;
      const before = view.innerHTML;
      sel.selectedIndex = (sel.selectedIndex + 1) % sel.options.length;
      sel.dispatchEvent(new Event('change'));
      await new Promise(r => setTimeout(r, 50));
      if (view.innerHTML === before) changed = false;
    }
    out.push({id: box.id, changed});
  }
  return out;
}"""


# CJK characters: CJK punctuation, kana, bopomofo and the rest of U+3000-U+33FF, the
# unified ideographs and extension A, compatibility ideographs, fullwidth and halfwidth
# forms, Hangul syllables, and the supplementary ideographs (extension B on)
CJK_CLASS = r"[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\u{20000}-\u{3ffff}]"

# each distinct CJK character of the page's text (not scripts or styles), per font it is
# set in, drawn on a canvas and compared with U+10FFFD (Supplementary Private Use
# Area-B, in no font), which Chromium draws as the missing-glyph box of the same font;
# whitespace (U+3000) is left out, its glyph is empty like some fonts' box
_CJK_GLYPHS = """async (limit) => {
  const cjk = /CJK_CLASS/u, space = /\\s/u;
  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE']);
  const byFont = new Map(), count = new Map(), where = new Map();
  if (!document.body) return {distinct: 0, boxes: [], occurrences: 0, pictured: false};
  await document.fonts.ready;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode());) {
    const el = node.parentElement;
    if (!el || skip.has(el.tagName) || !cjk.test(node.data)) continue;
    const s = getComputedStyle(el);
    const font = `${s.fontStyle} ${s.fontWeight} 32px ${s.fontFamily}`;
    if (!byFont.has(font)) byFont.set(font, new Set());
    let here = 0;
    for (const ch of node.data) {
      if (!cjk.test(ch) || space.test(ch)) continue;
      byFont.get(font).add(ch);
      count.set(ch, (count.get(ch) || 0) + 1);
      here += 1;
    }
    // the element with the most CJK text that a reader sees, for a picture of it
    const block = el.closest('p, li, pre, td, th, h1, h2, h3, h4, h5, h6, blockquote, .pe-out, div') || el;
    if (block.getClientRects().length) where.set(block, (where.get(block) || 0) + here);
  }
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 48;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const draw = (font, ch) => {
    ctx.clearRect(0, 0, 48, 48);
    ctx.font = font;
    ctx.textBaseline = 'middle';
    ctx.fillText(ch, 4, 24);
    return ctx.getImageData(0, 0, 48, 48).data.join(',');
  };
  let checked = 0;
  const boxes = new Set();
  for (const [font, chars] of byFont) {
    const text = [...chars].join('');
    try { await document.fonts.load(font, text); } catch (e) { /* a font that failed: drawn as boxes */ }
    const box = draw(font, String.fromCodePoint(0x10FFFD));
    for (const ch of chars) {
      if (checked >= limit) break;
      checked += 1;
      if (draw(font, ch) === box) boxes.add(ch);
    }
  }
  let best = null, most = 0;
  for (const [block, n] of where) if (n > most) { best = block; most = n; }
  if (best) best.setAttribute('data-check-site-cjk', '');
  const list = [...boxes].sort((a, b) => count.get(b) - count.get(a));
  return {distinct: count.size, boxes: list, occurrences: list.reduce((n, ch) => n + count.get(ch), 0),
          pictured: best !== null};
}""".replace("CJK_CLASS", CJK_CLASS)


def _js(source: str) -> str:
    return source.replace("RENDERED", _RENDERED)


def check_page(page, url: str, origin: str, name: str, shot: Path | None) -> PageReport:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    report = PageReport(name)
    page.on("console", lambda m: m.type == "error" and report.errors.append(m.text))
    page.on("pageerror", lambda e: report.errors.append(str(e)))
    page.on("response", lambda r: r.status >= 400 and report.errors.append(f"{r.status} for {r.url}"))

    def route(r):
        url = r.request.url
        if urlparse(url).netloc != urlparse(origin).netloc and not url.startswith("data:"):
            report.external.append(url)
            return r.abort()
        return r.continue_()

    page.route("**/*", route)
    page.goto(url, wait_until="load")
    try:
        page.wait_for_function(_js(_MATH_DONE), timeout=MATH_TIMEOUT_MS)
    except PlaywrightTimeout:  # counted below as math not rendered
        pass
    facts = page.evaluate(_js(_PAGE_FACTS))
    report.math, report.rendered, report.raw_math = facts["math"], facts["rendered"], facts["raw"]
    report.placeholders, report.broken_images = facts["placeholders"], facts["images"]
    report.no_alt = facts["noAlt"]
    report.downloads = page.evaluate("() => [...new Set([...document.querySelectorAll('a[href$=\".ipynb\"]')]"
                                     ".map(a => a.href))]")
    report.broken_downloads = [u for u in report.downloads if not page.request.get(u).ok]
    glyphs = page.evaluate(_CJK_GLYPHS, CJK_LIMIT)
    report.cjk, report.cjk_boxes = glyphs["distinct"], glyphs["boxes"]
    report.cjk_box_count = glyphs["occurrences"]
    if shot is not None and glyphs["pictured"]:  # a picture of the page's CJK text a reader sees
        shot.parent.mkdir(parents=True, exist_ok=True)
        cjk_shot = shot.with_name(shot.stem + "__cjk.png")
        page.locator("[data-check-site-cjk]").first.screenshot(path=str(cjk_shot))
    explorers = page.evaluate(_EXPLORERS)
    report.explorers = len(explorers)
    report.explorers_static = [e["id"] for e in explorers if not e["changed"]]
    if shot is not None:
        page.evaluate("() => document.fonts.ready.then(() => true)")  # web fonts in before the picture
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=True)
    return report


def check_search(page, origin: str, word: str) -> int:
    """How many results the site's search page lists for ``word``."""
    page.goto(f"{origin}/search.html?q={word}", wait_until="load")
    page.wait_for_function("() => document.querySelector('#search-results p.search-summary, "
                           "#search-results .search-summary')", timeout=MATH_TIMEOUT_MS)
    return page.evaluate("() => document.querySelectorAll('#search-results ul.search li').length")


def check_site(site: Path, screenshots: Path | None = None, search: str | None = None,
               browser: str | None = None, progress: bool = True) -> tuple[list[PageReport], list[str]]:
    """Check every page of ``site``; returns the page reports and the failures."""
    from playwright.sync_api import sync_playwright

    site = Path(site)
    found = pages(site)
    if not found:
        raise SystemExit(f"no HTML pages under {site}: build the book first")
    server, origin = serve(site)
    reports, failures = [], []
    try:
        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=find_browser(browser), args=["--no-sandbox"])
            for path in found:
                rel = path.relative_to(site).as_posix()
                shot = (screenshots / (rel.removesuffix(".html").replace("/", "__") + ".png")
                        if screenshots else None)
                # a fresh browser context per page: each page is checked as a reader's first
                # visit, without state (cookies, storage, caches) left by the pages before it
                context = chromium.new_context(viewport={"width": 1400, "height": 1000})
                page = context.new_page()
                try:
                    report = check_page(page, f"{origin}/{rel}", origin, rel, shot)
                except Exception as err:  # a page that cannot be checked is a failure, named
                    report = PageReport(rel, errors=[f"could not check the page: {err}"])
                finally:
                    context.close()
                reports.append(report)
                failures += report.failures()
                if progress:
                    print(f"{rel}: {report.math} math, {len(report.errors)} errors, "
                          f"{len(report.broken_images)} broken images, {report.explorers} explorers, "
                          f"{report.cjk} CJK characters ({len(report.cjk_boxes)} boxes)",
                          file=sys.stderr)
            if search:
                context = chromium.new_context()
                hits = check_search(context.new_page(), origin, search)
                context.close()
                if hits == 0:
                    failures.append(f"search.html: no result for {search!r}")
                elif progress:
                    print(f"search {search!r}: {hits} results", file=sys.stderr)
            chromium.close()
    finally:
        server.shutdown()
    return reports, failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", default="_build/html")
    parser.add_argument("--screenshots", default="_build/screenshots")
    parser.add_argument("--search", default="memorization", help="a word the site search must find")
    parser.add_argument("--browser", default=None, help="the Chromium executable")
    args = parser.parse_args(argv)
    reports, failures = check_site(Path(args.site), Path(args.screenshots), args.search, args.browser)
    for line in failures:
        print(line)
    print(f"{len(reports)} pages checked, {len(failures)} failures; screenshots in {args.screenshots}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
