"""Tests of analysis.core.data: registry, verified fetching and text cleaning.

Tests marked by the ``mirror`` fixture need the offline data mirror and skip
when ``MEMBOOK_DATA_MIRROR`` is unset; the others build what they need in
``tmp_path``. No test writes to the real cache or touches the network.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import urllib.error
from pathlib import Path

import pandas as pd
import pytest

from analysis.core import data

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "data"
HEX64 = re.compile(r"[0-9a-f]{64}")
PINNED_URL = re.compile(r"https://raw\.githubusercontent\.com/[^/]+/[^/]+/[0-9a-f]{40}/\S+")


def _sha(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    """A fresh cache per test, an empty hash memo, and no network."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("MEMBOOK_CACHE", str(cache))
    monkeypatch.setattr(data, "_HASHES", {})

    def no_network(*args, **kwargs):
        raise AssertionError("a test tried to reach the network")

    monkeypatch.setattr("urllib.request.urlopen", no_network)
    return cache


@pytest.fixture
def mirror():
    """Path of the offline data mirror; skips the test when it is not configured."""
    root = os.environ.get(data.MIRROR_ENV)
    if not root:
        pytest.skip(f"{data.MIRROR_ENV} is unset: point it at the offline data mirror")
    return Path(root)


# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------


def test_registry_has_one_valid_row_per_input():
    table = data.registry()
    assert len(table) == 266
    assert table["name"].is_unique
    assert table["sha256"].map(lambda s: bool(HEX64.fullmatch(s))).all()
    assert (table["bytes"] > 0).all()
    assert set(table["kind"]) == {"orig", "clean", "derived", "task", "phrases", "completions", "wordlist"}


def test_registry_urls_are_commit_pinned():
    table = data.registry()
    urls = table.loc[table["url"] != "", "url"]
    bad = [url for url in urls if not PINNED_URL.fullmatch(url)]
    assert bad == []
    # Only the Bible, assembled from 66 repositories, has no single source URL.
    assert table.loc[table["url"] == "", "name"].tolist() == ["texts/popular/bible_kjv.txt"]


def test_registry_derived_rows_say_what_they_come_from():
    table = data.registry().set_index("name")
    derived = table[table["kind"] == "derived"]
    assert sorted(derived.index) == [
        "texts/popular/bible_kjv.txt",
        "texts/popular/sermon_on_the_mount_kjv.txt",
        "texts/popular/un_charter.txt",
    ]
    assert (derived["derived_from"] != "").all()
    assert "gospel_of_matthew_kjv" in derived.loc["texts/popular/sermon_on_the_mount_kjv.txt", "derived_from"]


def test_registry_returns_a_copy():
    table = data.registry()
    table.loc[0, "sha256"] = "changed"
    assert data.registry().loc[0, "sha256"] != "changed"


def test_registry_csv_matches_sources_json(mirror):
    spec = importlib.util.spec_from_file_location("make_registry", REPO / "scripts" / "make_registry.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    rows = script.registry_rows(json.loads((mirror / "sources.json").read_text(encoding="utf-8")))
    expected = pd.DataFrame(rows, columns=script.COLUMNS)
    pd.testing.assert_frame_equal(data.registry(), expected, check_dtype=False)


# ---------------------------------------------------------------------------
# Fetching, on a fake mirror with a fake registry
# ---------------------------------------------------------------------------

GOOD = b"good bytes\n"
NAME = "texts/fake/a.txt"
URL = "https://raw.githubusercontent.com/o/r/" + "0" * 40 + "/a.txt"


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A one-file registry, and a mirror holding that file."""
    table = pd.DataFrame(
        [
            {
                "name": NAME,
                "url": URL,
                "sha256": _sha(GOOD),
                "bytes": len(GOOD),
                "kind": "orig",
                "license": "",
                "citation": "",
                "derived_from": "",
            }
        ]
    )
    monkeypatch.setattr(data, "registry", lambda: table.copy())
    root = tmp_path / "mirror"
    (root / NAME).parent.mkdir(parents=True)
    (root / NAME).write_bytes(GOOD)
    monkeypatch.setenv(data.MIRROR_ENV, str(root))
    return root


def _cached(cache: Path) -> Path:
    return cache / "data" / NAME


def test_mirror_used_when_cache_is_empty(fake, isolated_cache):
    path = data.fetch(NAME)
    assert path == fake / NAME
    assert path.read_bytes() == GOOD
    assert not _cached(isolated_cache).exists()


def test_corrupt_mirror_file_raises_with_name_hashes_and_remedy(fake):
    (fake / NAME).write_bytes(b"tampered\n")
    with pytest.raises(data.DataError) as err:
        data.fetch(NAME)
    message = str(err.value)
    assert NAME in message
    assert _sha(GOOD) in message
    assert _sha(b"tampered\n") in message
    assert data.MIRROR_ENV in message and URL in message


def test_corrupt_cache_copy_is_discarded_and_mirror_used(fake, isolated_cache):
    cached = _cached(isolated_cache)
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"half a downl")
    path = data.fetch(NAME)
    assert path == fake / NAME
    assert not cached.exists()


def test_valid_cache_copy_is_used_before_mirror(fake, isolated_cache, monkeypatch):
    cached = _cached(isolated_cache)
    cached.parent.mkdir(parents=True)
    cached.write_bytes(GOOD)
    monkeypatch.delenv(data.MIRROR_ENV)
    assert data.fetch(NAME) == cached


def test_failed_download_explains_how_to_get_the_file(fake, monkeypatch):
    monkeypatch.delenv(data.MIRROR_ENV)

    def offline(url, timeout):
        raise urllib.error.URLError("no route to host")

    monkeypatch.setattr("urllib.request.urlopen", offline)
    with pytest.raises(data.DataError) as err:
        data.fetch(NAME)
    message = str(err.value)
    assert NAME in message and _sha(GOOD) in message
    assert data.MIRROR_ENV in message and URL in message
    assert "no route to host" in message


def test_file_missing_from_mirror_is_downloaded(fake, isolated_cache, monkeypatch):
    (fake / NAME).unlink()
    seen = []

    def serve(url, timeout):
        seen.append((url, timeout))
        return io.BytesIO(GOOD)

    monkeypatch.setattr("urllib.request.urlopen", serve)
    path = data.fetch(NAME)
    assert path == _cached(isolated_cache)
    assert path.read_bytes() == GOOD
    assert seen == [(URL, data.DOWNLOAD_TIMEOUT_S)]
    # The second call is served from the cache, without the network.
    assert data.fetch(NAME) == path
    assert len(seen) == 1


def test_download_with_wrong_bytes_raises_and_caches_nothing(fake, isolated_cache, monkeypatch):
    monkeypatch.delenv(data.MIRROR_ENV)
    monkeypatch.setattr("urllib.request.urlopen", lambda url, timeout: io.BytesIO(b"evil\n"))
    with pytest.raises(data.DataError, match=_sha(b"evil\n")):
        data.fetch(NAME)
    assert not _cached(isolated_cache).exists()


def test_hashes_are_memoised_until_the_file_changes(fake, monkeypatch):
    calls = []
    real = data._sha256_file
    monkeypatch.setattr(data, "_sha256_file", lambda path: calls.append(path) or real(path))
    for _ in range(3):
        data.fetch(NAME)
    assert len(calls) == 1
    (fake / NAME).write_bytes(b"tampered, longer\n")
    with pytest.raises(data.DataError):
        data.fetch(NAME)
    assert len(calls) == 2


def test_unknown_name_lists_close_matches(fake):
    with pytest.raises(data.DataError, match=r"Did you mean: texts/fake/a\.txt"):
        data.fetch("texts/fake/a.tx")


def test_unknown_real_name_lists_close_matches():
    with pytest.raises(data.DataError) as err:
        data.fetch("texts/popular/hamlet.tx")
    assert "texts/popular/hamlet.txt" in str(err.value)


def test_unknown_text_id_lists_close_ids():
    with pytest.raises(data.DataError, match="Did you mean: hamlet"):
        data.text("hamlt")


def test_clean_text_refuses_non_text_files():
    with pytest.raises(data.DataError, match="not a cleaned text"):
        data.clean_text("tasks/gsm8k/test.jsonl")


# ---------------------------------------------------------------------------
# Cleaning rules, on hand-written inputs
# ---------------------------------------------------------------------------


def test_strip_gutenberg_on_fixture_with_start_and_end_markers():
    raw = (FIXTURES / "pg_modern.orig.txt").read_bytes()
    expected = (FIXTURES / "pg_modern.txt").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw
    assert data.strip_gutenberg(raw).encode("utf-8") == expected


def test_strip_gutenberg_on_fixture_with_old_small_print_in_latin1():
    raw = (FIXTURES / "pg_old_latin1.orig.txt").read_bytes()
    expected = (FIXTURES / "pg_old_latin1.txt").read_bytes()
    assert data.strip_gutenberg(raw, encoding="latin-1").encode("utf-8") == expected


def test_strip_gutenberg_custom_start_and_multiline_marker():
    raw = "Header\n***START OF THE PROJECT GUTENBERG EBOOK LONG\nTITLE***\nNotes\nCHAPTER 1\nText.\n"
    assert data.strip_gutenberg(raw) == "Notes\nCHAPTER 1\nText.\n"
    assert data.strip_gutenberg(raw, start=r"^CHAPTER 1") == "CHAPTER 1\nText.\n"
    with pytest.raises(data.DataError, match="start line"):
        data.strip_gutenberg(raw, start=r"^CHAPTER 9")


def test_strip_gutenberg_cuts_kjv_credits():
    raw = (
        "*** START OF THE PROJECT GUTENBERG EBOOK, THE BIBLE, KING JAMES, BOOK 65***\r\n\r\n"
        "This eBook was produced by David Widger\r\n\r\n"
        "Book 65        Jude\r\n\r\n65:001:001 Jude, the servant.\r\n\r\n\r\n"
        "*** END OF THE PROJECT GUTENBERG EBOOK, THE BIBLE, KING JAMES, BOOK 65 ***\r\n"
    )
    expected = "Book 65        Jude\n\n65:001:001 Jude, the servant.\n"
    assert data.strip_gutenberg(raw, cut_credits=True) == expected
    assert data.strip_gutenberg(raw).startswith("This eBook was produced")


def test_strip_front_matter():
    raw = b'---\ntitle: X\n\nsummary: "a: b"\n---\n\n# X \n\nBody `code`<br/>\n\n\n'
    assert data.strip_front_matter(raw) == "# X \n\nBody `code`<br/>\n"


def test_extract_un_charter_keeps_english_and_drops_heading_marks():
    raw = (
        "<meta charset='utf-8' />\n\n##Handvest van de Verenigde Naties\n\n"
        "####Charter of the United Nations\n\nWe the peoples\n### CHAPTER I \n\n"
        "### Article  1  \n\n1.To maintain peace.  \n\n"
        "####Handvest van de Verenigde Naties\n\nWij, de volken\n"
    )
    expected = (
        "Charter of the United Nations\n\nWe the peoples\nCHAPTER I\n\nArticle  1\n\n1.To maintain peace.  \n"
    )
    assert data.extract_un_charter(raw) == expected


def test_kjv_verses_stops_before_the_next_verse():
    book = (
        "Book 40        Matthew\n\n40:004:025 Before.\n\n40:005:001 First,\n"
        "           continued.\n\n40:005:002 Last.\n\n40:005:003 After.\n"
    )
    expected = "40:005:001 First,\n           continued.\n\n40:005:002 Last.\n"
    assert data.kjv_verses(book, "40:005:001", "40:005:002") == expected


# ---------------------------------------------------------------------------
# Cleaning rules against the mirror: byte-exact reproduction
# ---------------------------------------------------------------------------


def _names(kinds, prefix):
    table = data.registry()
    chosen = table["kind"].isin(kinds) & table["name"].str.startswith(prefix)
    return sorted(table.loc[chosen, "name"])


@pytest.mark.parametrize("name", _names(["clean"], "texts/popular/"))
def test_popular_text_reproduced_from_original(mirror, name):
    assert data.clean_text(name).encode("utf-8") == (mirror / name).read_bytes()


@pytest.mark.parametrize("name", _names(["clean"], "texts/baseline/"))
def test_baseline_story_reproduced_from_original(mirror, name):
    assert data.clean_text(name).encode("utf-8") == (mirror / name).read_bytes()


def test_sermon_on_the_mount_equals_mirror(mirror):
    expected = (mirror / "texts/popular/sermon_on_the_mount_kjv.txt").read_bytes()
    assert data.sermon_on_the_mount().encode("utf-8") == expected


def test_bible_kjv_equals_mirror(mirror):
    expected = (mirror / "texts/popular/bible_kjv.txt").read_bytes()
    assert data.bible_kjv().encode("utf-8") == expected


def test_un_charter_equals_mirror(mirror):
    expected = (mirror / "texts/popular/un_charter.txt").read_bytes()
    assert data.clean_text("texts/popular/un_charter.txt").encode("utf-8") == expected


def test_cleaned_text_is_rebuilt_when_only_the_original_is_available(
    tmp_path, monkeypatch, mirror, isolated_cache
):
    # A mirror holding only the original: the cleaned text must be built by code.
    name, orig = "texts/popular/hamlet.txt", "texts/popular/hamlet.orig.txt"
    partial = tmp_path / "partial"
    (partial / orig).parent.mkdir(parents=True)
    shutil.copyfile(mirror / orig, partial / orig)
    monkeypatch.setenv(data.MIRROR_ENV, str(partial))
    path = data.fetch(name)
    assert path == isolated_cache / "data" / name
    assert path.read_bytes() == (mirror / name).read_bytes()


# ---------------------------------------------------------------------------
# Text collections
# ---------------------------------------------------------------------------


def test_popular_texts_are_the_37_cleaned_files(mirror):
    texts = data.popular_texts()
    on_disk = {
        p.name.removesuffix(".txt")
        for p in (mirror / "texts/popular").glob("*.txt")
        if not p.name.endswith(".orig.txt")
    }
    assert len(texts) == 37
    assert set(texts) == on_disk
    assert texts["hamlet"] == (mirror / "texts/popular/hamlet.txt").read_text(encoding="utf-8")


def test_baseline_texts_are_the_4_stories(mirror):
    texts = data.baseline_texts()
    assert sorted(texts) == [
        "aut_r_inf_ct_d",
        "chain_of_thought",
        "everybody_watches_some_tv",
        "infinite_high_ground",
    ]
    assert texts["chain_of_thought"].startswith("# Chain of thought\n")


def test_text_by_short_id(mirror):
    assert data.text("chain_of_thought") == data.baseline_texts()["chain_of_thought"]
    assert data.text("udhr").startswith("Preamble\n")


def test_read_text_keeps_crlf(mirror):
    assert "\r\n" in data.read_text("texts/popular/hamlet.orig.txt")


def test_phrases_table(mirror):
    table = data.phrases()
    assert len(table) == 2000
    assert {"phrase", "type", "start", "end", "coef"} <= set(table.columns)
    assert table["type"].value_counts().to_dict() == {"culturax": 1000, "propaganda": 1000}
