"""The book's CJK web font: Noto Sans SC cut down to exactly the CJK characters the book uses.

    python scripts/subset_cjk_font.py [--source NotoSansSC_400Regular.ttf] [EXTRA ...]
    python scripts/subset_cjk_font.py --check [EXTRA ...]

The phrases chapter quotes Chinese (a prompt, the source's phrases, the models'
completions in its explorer). A reader without a CJK font would see every character
as an empty box, so the site ships its own: ``book/vendor/noto-sans-sc/`` holds the
subset (WOFF2), the characters it was cut to (``chars.txt``), the font's licence
(SIL OFL 1.1, ``LICENSE``) and a provenance note (``README.md``, written here), and
book/_ext/cjk_font.py serves it with the site (``@font-face`` in ``noto-sans-sc.css``).

The characters are every CJK character (scripts/check_site.py's ``CJK_CLASS``) in
the executed chapters (book/chapters/*.ipynb: their sources and outputs, the
explorers' data included), the chapters' sources (notebooks/*.md), the prose pages
(book/*.md), the results the scoreboard and status pages are built from
(results/*.json), and any EXTRA file or folder named (a built site, say). Rerun this
script when the book's text changes; ``--check`` says, without changing anything,
whether the vendored subset still covers the book (exit 1 naming what is missing).

The source is the static Regular instance of Noto Sans SC from the npm package
``@expo-google-fonts/noto-sans-sc`` (Google Fonts' files): without ``--source`` the
script fetches it with ``npm pack`` and checks its SHA-256. The subset is made by
fontTools' pyftsubset (``pip install fonttools brotli``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_site import CJK_CLASS  # noqa: E402  (standard library only at import)

VENDOR = ROOT / "book" / "vendor" / "noto-sans-sc"
FONT = VENDOR / "noto-sans-sc-book.woff2"
CHARS = VENDOR / "chars.txt"

PACKAGE = "@expo-google-fonts/noto-sans-sc"
VERSION = "0.4.3"
MEMBER = "package/400Regular/NotoSansSC_400Regular.ttf"
SOURCE_SHA256 = "d45f67f0a7c0ca3f256950777ce6a61cc7ce5f9696d02900cbbaac25f8aa7d16"

#: pyftsubset's options besides the font, the characters and the output: WOFF2, no
#: TrueType hinting (Chromium and Firefox hint CJK themselves, or not at all), no
#: vertical-writing alternates or metrics (the book sets text horizontally), and the
#: licence's name records kept in the font
SUBSET_OPTIONS = ["--flavor=woff2", "--no-hinting",
                  "--layout-features-=vert,vrt2,vkna,vhal,valt,vpal,vkrn",
                  "--drop-tables+=vhea,vmtx,VORG,STAT", "--name-IDs+=13,14"]

_CJK = re.compile(CJK_CLASS.replace(r"\u{20000}", "\U00020000").replace(r"\u{3ffff}", "\U0003ffff"))


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _text(path: Path) -> str:
    if path.suffix == ".ipynb":  # every string of the notebook, its outputs' included
        return "\n".join(_strings(json.loads(path.read_text(encoding="utf-8"))))
    return path.read_text(encoding="utf-8", errors="replace")


def book_files(extra: list[Path] = ()) -> list[Path]:
    """The files whose text the subset covers: the executed chapters, their sources,
    the prose pages, the results the scoreboard and status pages are built from, and
    the ``extra`` files (a folder: its .html, .md, .ipynb, .json)."""
    files = [*sorted((ROOT / "book" / "chapters").glob("*.ipynb")),
             *sorted((ROOT / "notebooks").glob("*.md")), *sorted((ROOT / "book").glob("*.md")),
             *sorted((ROOT / "results").glob("*.json"))]
    for path in map(Path, extra):
        files += (sorted(p for p in path.rglob("*") if p.suffix in {".html", ".md", ".ipynb", ".json"})
                  if path.is_dir() else [path])
    return files


def book_chars(extra: list[Path] = ()) -> str:
    """Every distinct CJK character the book uses (whitespace aside), sorted."""
    chars: set[str] = set()
    for path in book_files(extra):
        chars.update(_CJK.findall(_text(path)))
    return "".join(sorted(c for c in chars if not c.isspace()))


def vendored_chars() -> str:
    return "".join(CHARS.read_text(encoding="utf-8").split()) if CHARS.exists() else ""


def fetch_source(folder: Path) -> Path:
    """The source TTF from the npm package (``npm pack``), into ``folder``."""
    subprocess.run(["npm", "pack", f"{PACKAGE}@{VERSION}", "--silent"], cwd=folder, check=True,
                   stdout=subprocess.DEVNULL)
    tarball = next(folder.glob("*.tgz"))
    with tarfile.open(tarball) as tar:
        tar.extract(MEMBER, folder, filter="data")
    return folder / MEMBER


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def subset(source: Path, chars: str) -> list[str]:
    """Write the subset of ``source`` to FONT and CHARS; returns the pyftsubset command."""
    VENDOR.mkdir(parents=True, exist_ok=True)
    lines = [chars[i:i + 50] for i in range(0, len(chars), 50)]
    CHARS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    command = ["pyftsubset", source.name, f"--text-file={CHARS.relative_to(ROOT)}",
               f"--output-file={FONT.relative_to(ROOT)}", *SUBSET_OPTIONS]
    from fontTools.subset import main as pyftsubset

    if pyftsubset([str(source), f"--text-file={CHARS}", f"--output-file={FONT}", *SUBSET_OPTIONS]):
        raise SystemExit("pyftsubset failed")
    return command


def glyphs(font: Path) -> tuple[int, set[str]]:
    """How many glyphs ``font`` has, and the characters its cmap maps."""
    from fontTools.ttLib import TTFont

    f = TTFont(str(font))
    return f["maxp"].numGlyphs, {chr(c) for c in f.getBestCmap()}


README = """\
# Noto Sans SC, cut to the book's CJK characters

`noto-sans-sc-book.woff2` is the font the book's Chinese (and the odd kana) is set in,
on any reader's machine, with or without a CJK font of its own. It is written by
`scripts/subset_cjk_font.py`, with this note; do not edit either by hand. Rerun the
script when the book's text changes (`--check` says whether it must):

    .nox/fast/bin/pip install fonttools brotli   # once
    .nox/fast/bin/python scripts/subset_cjk_font.py

- **Font:** Noto Sans SC Regular, version {font_version} (Google Fonts' static instance;
  Adobe's Source Han Sans design), SIL Open Font License 1.1 (`LICENSE`, the package's
  `LICENSE_FONT`). The font declares no reserved font name of its own (Adobe reserves
  "Source"), so the subset keeps a descriptive family name in the CSS.
- **Source:** the npm package `{package}` version {version}, file
  `{member}`, SHA-256 `{sha}`
  (`npm pack {package}@{version}`).
- **Characters:** {n_chars} distinct CJK characters (`chars.txt`), every one in the executed
  chapters (`book/chapters/*.ipynb`, outputs and the explorers' data included),
  `notebooks/*.md`, `book/*.md` and `results/*.json` (the scoreboard's){extra}.
- **Subset:** {n_glyphs} glyphs, {size} bytes ({kb:.1f} KB), made with fontTools {fonttools} by

      {command}

- **Served:** `book/_ext/cjk_font.py` copies this folder to `_static/noto-sans-sc/` of the
  built site and links `noto-sans-sc.css`: an `@font-face` "Noto Sans SC Book" limited by
  `unicode-range` to the CJK blocks (Latin text never loads it), appended to the theme's
  body, heading and monospace font stacks, so the theme's fonts keep every Latin character.
  `scripts/check_site.py` fails a page whose CJK characters render as empty boxes.
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("extra", nargs="*", type=Path, help="more files or folders whose text to cover")
    parser.add_argument("--source", type=Path, help="the source TTF (default: fetched with npm pack)")
    parser.add_argument("--check", action="store_true",
                        help="only say whether the vendored subset covers the book (exit 1 if not)")
    args = parser.parse_args(argv)

    chars = book_chars(args.extra)
    if args.check:
        missing = "".join(c for c in chars if c not in set(vendored_chars()))
        if missing or not FONT.exists():
            print(f"the vendored CJK font lacks {len(missing)} of the book's {len(chars)} CJK characters "
                  f"({missing[:40]}): rerun scripts/subset_cjk_font.py")
            return 1
        print(f"the vendored CJK font covers the book's {len(chars)} CJK characters")
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        source = args.source or fetch_source(Path(tmp))
        digest = sha256(source)
        if digest != SOURCE_SHA256:
            raise SystemExit(f"{source}: SHA-256 {digest}, not {PACKAGE} {VERSION}'s {SOURCE_SHA256}")
        from fontTools.ttLib import TTFont

        font_version = f"{TTFont(str(source))['head'].fontRevision:.3f}"
        command = subset(source, chars)
    n_glyphs, mapped = glyphs(FONT)
    if missing := "".join(c for c in chars if c not in mapped):
        print(f"warning: Noto Sans SC has no glyph for {len(missing)} character(s): {missing}",
              file=sys.stderr)
    import fontTools

    size = FONT.stat().st_size
    extra = "".join(f", `{shlex.quote(str(p))}`" for p in args.extra)
    (VENDOR / "README.md").write_text(README.format(
        font_version=font_version, package=PACKAGE, version=VERSION, member=MEMBER, sha=SOURCE_SHA256,
        n_chars=len(chars), extra=extra, n_glyphs=n_glyphs, size=size, kb=size / 1024,
        fonttools=fontTools.version, command=" ".join(shlex.quote(c) for c in command)), encoding="utf-8")
    print(f"{FONT.relative_to(ROOT)}: {len(chars)} characters, {n_glyphs} glyphs, {size / 1024:.1f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
