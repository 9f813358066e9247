"""Input files of the book: registry, verified fetching, and text cleaning.

Every input file (texts, benchmark tasks, phrase lists) is listed in
``data/registry.csv`` with its sha256, size, licence, citation and a
commit-pinned source URL. :func:`fetch` returns a local copy of a file and
checks its sha256 every time, looking in this order:

1. the cache, ``analysis.core.cache.cache_dir() / "data" / <name>``;
2. the offline data mirror, a folder named by the ``MEMBOOK_DATA_MIRROR``
   environment variable (used in place, it is read-only);
3. the network: originals are downloaded from their URL, cleaned and derived
   texts are rebuilt by code from their originals; either lands in the cache.

The cleaning functions reproduce the mirror's cleaned texts byte for byte from
the original files, so every text used by the book can be rebuilt from its
public source.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import urllib.error
import urllib.request
from functools import lru_cache
from pathlib import Path

import pandas as pd

from analysis.core.cache import cache_dir, stable_hash
from analysis.core.paths import DATA_DIR

MIRROR_ENV = "MEMBOOK_DATA_MIRROR"
REGISTRY_CSV = DATA_DIR / "registry.csv"
DOWNLOAD_TIMEOUT_S = 60
POPULAR_DIR = "texts/popular/"
BASELINE_DIR = "texts/baseline/"
MATTHEW = "texts/popular/gospel_of_matthew_kjv.txt"
# PG ebooks #8001-#8066 hold the 66 books in canonical order.
BIBLE_PARTS = tuple(
    f"texts/popular/bible_kjv_parts/{8000 + book}.orig.txt" for book in range(1, 67)
)
TEXT_KINDS = ("clean", "derived")


class DataError(Exception):
    """An input file is unknown, cannot be obtained, fails its sha256 check, or
    lacks a line its cleaning needs (the core layer's one error for inputs)."""


# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _load_registry() -> pd.DataFrame:
    table = pd.read_csv(REGISTRY_CSV, dtype=str, keep_default_na=False)
    return table.astype({"bytes": "int64"})


def registry() -> pd.DataFrame:
    """The registry of every input file of the book.

    Returns
    -------
    pandas.DataFrame
        One row per file with columns ``name`` (path inside the mirror),
        ``url`` (commit-pinned raw URL of the source file; empty when the file
        has no single source), ``sha256``, ``bytes``, ``license``,
        ``citation``, ``kind`` (``orig``, ``clean``, ``derived``, ``task``,
        ``phrases``, ``completions`` or ``wordlist``) and ``derived_from``. A fresh copy, safe to modify.
    """
    return _load_registry().copy()


def _suggestions(query: str, names: list[str]) -> list[str]:
    close = difflib.get_close_matches(query, names, n=5, cutoff=0.6)
    # Short queries ("hamlet") are far from full paths, so also offer containment.
    containing = [name for name in names if query and query in name]
    return list(dict.fromkeys(close + containing))[:8]


def _unknown(what: str, query: str, names: list[str]) -> DataError:
    hints = _suggestions(query, names)
    hint = f" Did you mean: {', '.join(hints)}?" if hints else ""
    return DataError(f"unknown {what} {query!r}.{hint}")


def _entry(name: str) -> dict:
    table = registry()
    match = table[table["name"] == name]
    if match.empty:
        raise _unknown("data file", name, table["name"].tolist())
    return match.iloc[0].to_dict()


# ---------------------------------------------------------------------------
# Verified fetching
# ---------------------------------------------------------------------------

# sha256 of files already hashed in this process, keyed by path and valid while
# (mtime_ns, size) are unchanged: texts of several MB are read many times.
_HASHES: dict[Path, tuple[int, int, str]] = {}


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    stat = path.stat()
    known = _HASHES.get(path)
    if known and known[:2] == (stat.st_mtime_ns, stat.st_size):
        return known[2]
    sha = _sha256_file(path)
    _HASHES[path] = (stat.st_mtime_ns, stat.st_size, sha)
    return sha


def _how_to_get(entry: dict) -> str:
    ways = [f"set {MIRROR_ENV} to a folder (the offline data mirror) holding {entry['name']}"]
    if entry["kind"] in TEXT_KINDS:
        ways.append(f"let analysis.core.data rebuild it from {entry['derived_from']}")
    elif entry["url"]:
        ways.append(f"download it from {entry['url']}")
    return "To get it, " + ", or ".join(ways) + "."


def _hash_error(entry: dict, where: str, actual: str) -> DataError:
    return DataError(
        f"{entry['name']}: the {where} fails its sha256 check: expected "
        f"{entry['sha256']}, got {actual}. {_how_to_get(entry)}"
    )


def _mirror_file(name: str) -> Path | None:
    root = os.environ.get(MIRROR_ENV)
    if not root:
        return None
    path = Path(root) / name
    return path if path.is_file() else None


def _download(entry: dict) -> bytes:
    if not entry["url"]:
        raise DataError(
            f"{entry['name']} (sha256 {entry['sha256']}) is not cached, not in the mirror "
            f"and has no download URL. {_how_to_get(entry)}"
        )
    try:
        with urllib.request.urlopen(entry["url"], timeout=DOWNLOAD_TIMEOUT_S) as response:
            return response.read()
    except (urllib.error.URLError, OSError) as exc:
        raise DataError(
            f"{entry['name']} (sha256 {entry['sha256']}) is not cached, not in the mirror, "
            f"and downloading {entry['url']} failed: {exc}. {_how_to_get(entry)}"
        ) from exc


def _build(entry: dict) -> bytes:
    # The URL of a cleaned text points at its uncleaned original, so rebuild it.
    try:
        return clean_text(entry["name"]).encode("utf-8")
    except DataError as exc:
        raise DataError(
            f"{entry['name']} (sha256 {entry['sha256']}) is not cached, not in the mirror, "
            f"and could not be rebuilt: {exc}"
        ) from exc


def _write_atomic(path: Path, payload: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f"{path.name}.part{os.getpid()}")
    part.write_bytes(payload)
    os.replace(part, path)


def _obtain(entry: dict, target: Path) -> Path:
    payload = _build(entry) if entry["kind"] in TEXT_KINDS else _download(entry)
    actual = hashlib.sha256(payload).hexdigest()
    if actual != entry["sha256"]:
        where = "rebuilt text" if entry["kind"] in TEXT_KINDS else "download"
        raise _hash_error(entry, where, actual)
    _write_atomic(target, payload)
    return target


def fetch(name: str) -> Path:
    """Local path of a registered input file, after checking its sha256.

    Parameters
    ----------
    name : str
        Registry name, the file's path inside the mirror, e.g.
        ``"texts/popular/hamlet.txt"``.

    Returns
    -------
    pathlib.Path
        A cached copy, or the mirror's file itself; either matches the
        registered sha256.

    Raises
    ------
    DataError
        If ``name`` is unknown (the message lists close matches), the mirror's
        copy is corrupt, or the file cannot be downloaded or rebuilt. The
        message names the file, the expected sha256 and how to get the file.

    Notes
    -----
    A cached copy that fails the check is deleted and the file is resolved
    again from the mirror or the network.
    """
    entry = _entry(name)
    cached = cache_dir() / "data" / name
    if cached.is_file():
        if _file_sha256(cached) == entry["sha256"]:
            return cached
        cached.unlink()
    mirrored = _mirror_file(name)
    if mirrored is not None:
        actual = _file_sha256(mirrored)
        if actual != entry["sha256"]:
            raise _hash_error(entry, f"mirror copy {mirrored}", actual)
        return mirrored
    return _obtain(entry, cached)


def read_text(name: str, encoding: str = "utf-8") -> str:
    """Contents of a registered file, decoded but otherwise unchanged.

    Parameters
    ----------
    name : str
        Registry name of the file.
    encoding : str, default "utf-8"
        Text encoding of the file.

    Returns
    -------
    str
        The file's text; line endings are kept as stored (no newline translation).
    """
    return fetch(name).read_bytes().decode(encoding)


# ---------------------------------------------------------------------------
# Cleaning
# ---------------------------------------------------------------------------

# The closing *** may sit on the next line (multi-line marker in PG #521).
_PG_START = re.compile(
    r"^\*\*\* ?START OF (?:THE|THIS) PROJECT GUTENBERG EBOOK[^*]*\*\*\*[^\n]*\n", re.MULTILINE
)
_PG_END = re.compile(r"^\*\*\* ?END OF (?:THE|THIS) PROJECT GUTENBERG EBOOK", re.MULTILINE)
_PG_SMALL_PRINT_END = re.compile(r"^\*END\*? ?THE SMALL PRINT[^\n]*\n", re.MULTILINE)
_PG_END_LINE = re.compile(r"^End of (?:the )?Project Gutenberg", re.MULTILINE | re.IGNORECASE)
_KJV_BOOK_LINE = re.compile(r"^Book \d+ ", re.MULTILINE)
_KJV_VERSE_LINE = re.compile(r"^\d\d:\d\d\d:\d\d\d ", re.MULTILINE)
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_HEADING_MARKS = re.compile(r"^#+\s*")


def _decode(raw: bytes | str, encoding: str = "utf-8") -> str:
    text = raw.decode(encoding) if isinstance(raw, bytes) else raw
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def _trim_lines(text: str, tail_junk: tuple[str, ...] = ("",)) -> str:
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and lines[-1].strip() in tail_junk:
        lines.pop()
    return "\n".join(lines) + "\n"


def _search(pattern: re.Pattern, text: str, what: str) -> re.Match:
    match = pattern.search(text)
    if match is None:
        raise DataError(f"no {what} found")
    return match


def _gutenberg_body_start(text: str, start: str | None) -> int:
    if start is not None:
        return _search(re.compile(start, re.MULTILINE), text, f"start line {start!r}").start()
    marker = _PG_START.search(text) or _PG_SMALL_PRINT_END.search(text)
    return marker.end() if marker else 0


def _gutenberg_body_end(body: str) -> int:
    ends = [m.start() for m in (_PG_END.search(body), _PG_END_LINE.search(body)) if m]
    return min(ends, default=len(body))


def strip_gutenberg(
    raw: bytes | str,
    *,
    encoding: str = "utf-8",
    start: str | None = None,
    cut_credits: bool = False,
) -> str:
    """Text of a Project Gutenberg file without the PG header and footer.

    Parameters
    ----------
    raw : bytes or str
        The original file, PG header and footer included.
    encoding : str, default "utf-8"
        Encoding of ``raw`` when it is bytes (``"latin-1"`` for ``1661-8.txt``).
    start : str, optional
        Regular expression (multi-line mode) of the first line of the text,
        for files whose text does not begin right after a start marker. The
        text starts at its first match anywhere in the file.
    cut_credits : bool, default False
        Start at the ``Book NN`` line, cutting the producer credits that the
        per-book KJV ebooks carry after the start marker.

    Returns
    -------
    str
        The text, with LF line endings, no leading or trailing blank lines and
        exactly one final newline.

    Notes
    -----
    Rules, which reproduce the mirror's cleaned texts byte for byte:

    * decode, drop a UTF-8 byte-order mark, turn CRLF into LF;
    * the text begins after the line ending the ``*** START OF THE/THIS
      PROJECT GUTENBERG EBOOK ... ***`` marker (which may span two lines);
      failing that, after the old ``*END*THE SMALL PRINT!...*END*`` line;
      failing that, at the top. ``start`` overrides all three;
    * the text ends at the first ``*** END OF THE/THIS PROJECT GUTENBERG
      EBOOK`` marker or the first line beginning ``End of [the] Project
      Gutenberg`` (any case), whichever comes first;
    * leading blank lines are dropped, and so are trailing lines that are
      blank or just ``***`` (old etexts put one before the "End of" line);
    * producer credits inside the markers are kept unless ``cut_credits``.

    Raises
    ------
    DataError
        If ``start`` or, with ``cut_credits``, a ``Book NN`` line is not found.
    """
    text = _decode(raw, encoding)
    body = text[_gutenberg_body_start(text, start) :]
    if cut_credits:
        body = body[_search(_KJV_BOOK_LINE, body, "'Book NN' line").start() :]
    return _trim_lines(body[: _gutenberg_body_end(body)], tail_junk=("", "***"))


def strip_front_matter(raw: bytes | str) -> str:
    """Markdown story without its Jekyll YAML front matter.

    Parameters
    ----------
    raw : bytes or str
        A Jekyll markdown file (UTF-8) starting with a ``---`` delimited block.

    Returns
    -------
    str
        The markdown after the front matter, unchanged except that leading and
        trailing blank lines are dropped and it ends with one newline.
    """
    return _trim_lines(_FRONT_MATTER.sub("", _decode(raw), count=1))


def extract_un_charter(raw: bytes | str) -> str:
    """English text of the UN Charter from the bilingual markdown source.

    Parameters
    ----------
    raw : bytes or str
        The source markdown (UTF-8): a Dutch title, the English text from the
        ``Charter of the United Nations`` heading, then the Dutch translation
        from the next ``Handvest van de Verenigde Naties`` heading.

    Returns
    -------
    str
        The English section with heading marks (``#``) and the trailing spaces
        of heading lines removed, trailing blank lines dropped, one final newline.
    """
    lines = _decode(raw).split("\n")
    first = next(
        i for i, line in enumerate(lines) if _is_heading(line, "Charter of the United Nations")
    )
    stop = next(
        i
        for i, line in enumerate(lines)
        if i > first and _is_heading(line, "Handvest van de Verenigde Naties")
    )
    section = [
        _HEADING_MARKS.sub("", line).rstrip() if line.startswith("#") else line
        for line in lines[first:stop]
    ]
    return _trim_lines("\n".join(section))


def _is_heading(line: str, title: str) -> bool:
    return line.startswith("#") and _HEADING_MARKS.sub("", line).strip() == title


def kjv_verses(text: str, first: str, last: str) -> str:
    """Passage of a cleaned KJV book, from one verse to another inclusive.

    Parameters
    ----------
    text : str
        A cleaned per-book KJV text, one verse per ``BB:CCC:VVV`` line
        (continuation lines indented).
    first, last : str
        Verse ids such as ``"40:005:001"``.

    Returns
    -------
    str
        The verse lines from ``first`` through the end of ``last``, trailing
        blank lines dropped, one final newline.
    """
    begin = _search(
        re.compile(rf"^{re.escape(first)} ", re.MULTILINE), text, f"verse {first}"
    ).start()
    final = _search(re.compile(rf"^{re.escape(last)} ", re.MULTILINE), text, f"verse {last}")
    after = _KJV_VERSE_LINE.search(text, final.end())
    return _trim_lines(text[begin : after.start() if after else len(text)])


def sermon_on_the_mount() -> str:
    """The Sermon on the Mount, KJV Matthew 5:1-7:29, cut from the cleaned Matthew.

    Returns
    -------
    str
        Equal to the mirror's ``texts/popular/sermon_on_the_mount_kjv.txt``.
    """
    return kjv_verses(clean_text(MATTHEW), "40:005:001", "40:007:029")


def bible_kjv() -> str:
    """The whole King James Bible built from the 66 per-book PG ebooks.

    Each book (PG #8001-#8066, canonical order) is stripped of its PG header,
    footer and producer credits; the books are joined with two blank lines.

    Returns
    -------
    str
        Equal to the mirror's ``texts/popular/bible_kjv.txt``.
    """
    books = (strip_gutenberg(fetch(part).read_bytes(), cut_credits=True) for part in BIBLE_PARTS)
    return "\n\n".join(books)


# Per-text options of strip_gutenberg, keyed by text id; the rest use the defaults.
_GUTENBERG_OPTIONS: dict[str, dict] = {
    "sherlock_holmes": {"encoding": "latin-1"},
    "bill_of_rights": {"start": r"^The United States Bill of Rights\."},
    "declaration_of_independence": {
        "start": r"^The Declaration of Independence of The United States of America"
    },
    "us_constitution": {"start": r"^THE CONSTITUTION OF THE UNITED STATES OF AMERICA, 1787"},
    "gospel_of_matthew_kjv": {"cut_credits": True},
    "psalms_kjv": {"cut_credits": True},
}


def _orig_of(name: str) -> str:
    return name.removesuffix(".txt") + ".orig.txt"


def _un_charter() -> str:
    return extract_un_charter(fetch(_orig_of("texts/popular/un_charter.txt")).read_bytes())


def _udhr() -> str:
    # The UDHR source is already plain text; the mirror keeps it unchanged.
    return read_text(_orig_of("texts/popular/udhr.txt"))


_BUILDERS = {
    "texts/popular/bible_kjv.txt": bible_kjv,
    "texts/popular/sermon_on_the_mount_kjv.txt": sermon_on_the_mount,
    "texts/popular/un_charter.txt": _un_charter,
    "texts/popular/udhr.txt": _udhr,
}


def clean_text(name: str) -> str:
    """Build a cleaned text by code from its original source file(s).

    Parameters
    ----------
    name : str
        Registry name of a cleaned or derived text, e.g.
        ``"texts/popular/hamlet.txt"`` or ``"texts/baseline/chain_of_thought.txt"``.

    Returns
    -------
    str
        The cleaned text; its UTF-8 bytes equal the mirror's file.

    Raises
    ------
    DataError
        If ``name`` is unknown or is not a cleaned text.
    """
    entry = _entry(name)
    if entry["kind"] not in TEXT_KINDS:
        raise DataError(f"{name} is a {entry['kind']} file, not a cleaned text")
    if name in _BUILDERS:
        return _BUILDERS[name]()
    raw = fetch(_orig_of(name)).read_bytes()
    if name.startswith(BASELINE_DIR):
        return strip_front_matter(raw)
    return strip_gutenberg(raw, **_GUTENBERG_OPTIONS.get(_text_id(name), {}))


# ---------------------------------------------------------------------------
# Texts by short id
# ---------------------------------------------------------------------------


def _text_id(name: str) -> str:
    return name.rsplit("/", 1)[-1].removesuffix(".txt")


def _text_names(folder: str) -> list[str]:
    table = registry()
    in_folder = table["name"].str.startswith(folder) & ~table["name"].str[
        len(folder) :
    ].str.contains("/")
    return sorted(table.loc[in_folder & table["kind"].isin(TEXT_KINDS), "name"])


def text(text_id: str) -> str:
    """Cleaned text by its short id.

    Parameters
    ----------
    text_id : str
        File stem of a popular or baseline text, e.g. ``"hamlet"`` or
        ``"chain_of_thought"``.

    Returns
    -------
    str
        The cleaned text (from the cache or mirror, or rebuilt from its original).

    Raises
    ------
    DataError
        If no text has that id; the message lists close ids.
    """
    names = {_text_id(n): n for folder in (POPULAR_DIR, BASELINE_DIR) for n in _text_names(folder)}
    if text_id not in names:
        raise _unknown("text id", text_id, sorted(names))
    return read_text(names[text_id])


def popular_texts() -> dict[str, str]:
    """The popular texts (37), cleaned, keyed by short id.

    Returns
    -------
    dict of str to str
        Every cleaned ``texts/popular/*.txt`` file; the 66 per-book KJV
        originals are not separate texts (they make up ``bible_kjv``).
    """
    return {_text_id(name): read_text(name) for name in _text_names(POPULAR_DIR)}


def baseline_texts() -> dict[str, str]:
    """The baseline short stories (4), cleaned, keyed by short id.

    Returns
    -------
    dict of str to str
        Every cleaned ``texts/baseline/*.txt`` file (recent short stories by
        Peter Bloem, CC-BY 4.0).
    """
    return {_text_id(name): read_text(name) for name in _text_names(BASELINE_DIR)}


def phrases() -> pd.DataFrame:
    """Chinese state-media and CulturaX phrases of the state-media study.

    Returns
    -------
    pandas.DataFrame
        One row per phrase (2,000) with the columns of
        ``state_media/phrases.json``: ``coef``, ``phrase``, ``type``,
        ``start``, ``end``, ``start_chat``, ``id`` and ``_row``.
    """
    return pd.DataFrame(json.loads(read_text("state_media/phrases.json")))


def registry_fingerprint(prefixes: list[str] | tuple[str, ...]) -> str:
    """A short hash of the sha256 of every registered input under ``prefixes``:
    part of the cache key of anything computed from those inputs."""
    reg = registry()
    rows = reg[reg["name"].str.startswith(tuple(prefixes))].sort_values("name")
    return stable_hash(list(zip(rows["name"], rows["sha256"])))
