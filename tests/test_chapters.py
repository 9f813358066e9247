"""Smoke execution of every chapter, and the book built from it.

Each chapter runs on the ``smoke`` profile with papermill into a temporary copy
of the book, which is then built with Jupyter Book (warnings as errors). A bad
parameter must fail at the top of the chapter, before any model loads.

Every chapter is executed once in the whole run, on the smoke lab trained once
(tests/conftest.py's ``smoke_lab``), into one copy of the book shared by the
run's processes. Each chapter's tests are a class, which pytest-xdist's
``--dist loadscope`` schedules on one worker, so the chapters execute on every
worker at once; the class that builds the book (``TestSite``) waits for the
chapters another worker is executing, and executes those no one has started.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import papermill as pm
import pytest

from analysis.book import plan
from analysis.book.chapters import declaration
from analysis.book.phenomena import CHAPTERS
from analysis.core.claims import INCONCLUSIVE, STATUSES, Claim, from_json
from analysis.models import checkpoints
from conftest import CACHE_ENV, QUERY_CACHE_ENV, file_lock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from check_site import have_browser  # noqa: E402
from execute_chapters import chapters, execute, glued_values  # noqa: E402

# the venv's jupyter-book, also when pytest runs without the venv on PATH
JUPYTER_BOOK = shutil.which("jupyter-book") or str(Path(sys.executable).with_name("jupyter-book"))
# every test of this module shares one cache (tests/conftest.py): the smoke lab is trained
# into it once, and every chapter's smoke execution reuses it
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not os.environ.get("MEMBOOK_DATA_MIRROR"), reason="MEMBOOK_DATA_MIRROR is unset"),
    pytest.mark.usefixtures("use_shared_cache"),
]


@pytest.fixture(scope="session")
def smoke_site(run_folder) -> Path:
    """The run's copy of the book (its configuration and prose pages; no executed chapter)."""
    site = run_folder / "smoke-site"
    with file_lock(run_folder / "smoke-site.lock"):
        if not (site / "_toc.yml").exists():
            shutil.rmtree(site, ignore_errors=True)
            shutil.copytree(ROOT / "book", site / "book", ignore=shutil.ignore_patterns("chapters", "_build"))
            for name in ("_config.yml", "_toc.yml"):
                shutil.copy(ROOT / name, site / name)
    return site


@pytest.fixture(scope="session")
def smoke(smoke_site, smoke_lab, run_folder):
    """``smoke(name)``: the chapter's notebook executed on the smoke profile into the
    site, once in the run. The first process to ask executes it (under a lock, on the
    smoke lab); the others wait for it, then read it. An execution that failed fails
    every test that asks for it, without executing it again."""
    marks = run_folder / "smoke-executions"

    def executed(name: str) -> Path:
        notebook = smoke_site / "book" / "chapters" / f"{name}.ipynb"
        done, failed = marks / f"{name}.json", marks / f"{name}.failed"
        with file_lock(marks / f"{name}.lock"):
            if not done.exists() and not failed.exists():
                if name != "lab":  # the kernel converts a built-in model without the tests' lock
                    for model in checkpoints.GGUF_SOURCES:
                        checkpoints.convert_gguf(model)
                try:
                    with pytest.MonkeyPatch.context() as mp:
                        mp.setenv(CACHE_ENV, str(smoke_lab))
                        mp.delenv(QUERY_CACHE_ENV, raising=False)
                        seconds = execute(name, {"profile": "smoke"}, notebook.parent)
                except Exception as exc:
                    failed.write_text(f"{type(exc).__name__}: {exc}"[-5000:])
                    raise
                done.write_text(json.dumps({"seconds": round(seconds, 1)}))
        if failed.exists():
            pytest.fail(f"the smoke execution of {name} failed:\n{failed.read_text()}")
        return notebook

    return executed


def glued_claims(notebook: Path) -> tuple[int, list[Claim]]:
    """How many times an executed chapter glued ``claims``, and the claims of the last."""
    nb = json.loads(notebook.read_text())
    records = [o for c in nb["cells"] for o in c.get("outputs", [])
               if o.get("metadata", {}).get("scrapbook", {}).get("name") == "claims"]
    values = glued_values(notebook)
    return len(records), from_json(values["claims"]) if "claims" in values else []


class SmokeChapter:
    """The tests every chapter's smoke execution passes; a subclass per chapter names it
    (``chapter``) and adds the chapter's own."""

    chapter: str

    def test_the_chapter_executes_on_smoke(self, smoke):
        nb = json.loads(smoke(self.chapter).read_text())
        errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors

    def test_the_chapter_glues_its_claims_once_with_their_renderings(self, smoke):
        """What execute_chapters.py writes to results/<chapter>.json under "claims": each
        chapter glues all its claims once (report.glue_claims), each with a status and a
        reason, its rendering under claim_<id>, and a section label the chapter has."""
        name = self.chapter
        notebook = smoke(name)
        times, claims = glued_claims(notebook)
        if name == "lab" and times == 0:  # the lab page re-runs no source: it may state no claim
            return
        assert times == 1, f"{name}: claims glued {times} times"
        assert claims, f"{name}: no claim"
        values = glued_values(notebook)
        source = (ROOT / "notebooks" / f"{name}.md").read_text()
        for c in claims:
            assert c.chapter == name and c.status in STATUSES and c.reason, (name, c.id)
            assert values.get(f"claim_{c.id}"), f"{name}: claim {c.id} has no rendering glued"
            assert c.section and f"({c.section})=" in source, f"{name}: claim {c.id}: no label {c.section!r}"


class PlanCounts:
    """For a chapter with a cost preview (``analysis.book.plan``)."""

    def test_the_plan_counts_the_queries_the_smoke_execution_sent(self, smoke):
        """The cost preview, made before the run, against what the run reported: every
        query it marks certain was sent, and nothing beyond its "at most" rows."""
        chapter = self.chapter
        values = glued_values(smoke(chapter))
        groups = plan.chapter_plan(chapter, declaration(chapter).resolve("smoke"))
        totals = plan.totals(plan.table(chapter, groups))
        assert totals["exact_queries"] <= int(values["run_queries"]) <= totals["queries"]
        if chapter == "size":  # no query of this chapter depends on an earlier answer
            assert totals["exact_queries"] == totals["queries"] == int(values["run_queries"])


def test_every_chapter_has_its_smoke_tests():
    assert chapters() and sorted(c.chapter for c in SmokeChapter.__subclasses__()) == sorted(chapters())


class TestLab(SmokeChapter):
    chapter = "lab"

    def test_lab_smoke_exposure_check_holds(self, smoke):
        values = glued_values(smoke("lab"))
        assert values["all_agree"] == "agree exactly"
        # 4 ladder models + 4 standard twins + 3 ablation runs + 1 held-out model on the smoke profile
        assert values["n_standard"] == "12"
        # the learned checks: one sequence per task and level (6 tasks), 40 facts of which 4 controls,
        # nothing decontaminated wrongly, the ladder's span (wide-32 over deep-16)
        mia = (values["mia_nonmembers"], values["mia_members_1copy"], values["mia_members_4copy"])
        assert mia == ("6", "6", "6")
        assert values["knowledge_facts"] == "40" and values["knowledge_zero_facts"] == "4"
        assert values["knowledge_decontaminated"] == "0" and values["lab_span"] == "3"
        # the table of phenomena: a row per chapter, and the ladder's families counted
        assert all(values[f"phenomenon_{c}"] for c in CHAPTERS)
        assert values["ladder_families"] == "2" and 0 <= int(values["ladder_monotone_families"]) <= 2


class TestPhrases(PlanCounts, SmokeChapter):
    chapter = "phrases"

    def test_phrases_smoke_glues_real_numbers(self, smoke):
        values = glued_values(smoke("phrases"))
        assert values["n_sample"] == "12"  # 6 phrases of each type on the smoke profile
        assert values["first_model"] == "smollm2-135m-instruct"
        assert re.fullmatch(r"\d+\.\d% \[\d+\.\d, \d+\.\d\]%", values["first_sm"])
        assert int(values["n_windowed"]) >= int(values["n_prefix"])
        assert int(values["n_errors"]) == 0
        # the usage the summary and results/ read: every query is a call or a cache hit
        assert int(values["run_queries"]) == int(values["run_calls"]) + int(values["run_hits"]) > 0


class TestSize(PlanCounts, SmokeChapter):
    chapter = "size"

    def test_size_smoke_runs_the_method_on_the_lab_ladder(self, smoke):
        values = glued_values(smoke("size"))
        assert values["lab_n"] == "4"  # the smoke ladder: 2 wide and 2 deep runs
        # the ladder's verdict is the rendering of its claim, whose value is the glued R²
        law = {c.id: c for c in from_json(values["claims"])}["lab_law"]
        assert f"{law.value:.2f}" == values["lab_r2"] and law.n == 4
        assert values["lab_verdict"] == values["claim_lab_law"] and values["cal_verdict"]
        assert law.n >= law.min_n or law.status == INCONCLUSIVE  # too few ladder models decide nothing
        assert values["t2_valid"] == "16 of 16"  # Table II: every MoE best bound is below the true size
        assert int(values["n_errors"]) == 0


class TestEntropy(SmokeChapter):
    chapter = "entropy"

    def test_entropy_smoke_runs_on_the_lab_and_a_real_model(self, smoke):
        values = glued_values(smoke("entropy"))
        assert values["lab_pairs"] == "150"  # the lab page ran first: the lab section has numbers
        assert int(values["lab_kept"].replace(",", "")) <= 150
        # the smoke profile decides 4 lab candidate sets and 2 real ones (5 + 3 sets, one reference each)
        # "R of T" over every candidate set, with "(U undecided, counted as misses)" when the
        # rule leaves sets without a line (an undecided set is a miss: the rule made no call)
        tally = re.compile(r"(\d+) of (\d+)(?: \((\d+) undecided, counted as misses\))?$")

        def parse(text):
            right, total, undecided = tally.fullmatch(text).groups()
            total, undecided = int(total), int(undecided or 0)
            return int(right), total - undecided, undecided, total

        lab, real, both = (parse(values[k]) for k in ("di_lab_correct", "di_real_correct", "di_correct"))
        assert (lab[3], real[3], both[3]) == (4, 2, 6)
        assert both[0] == lab[0] + real[0] and both[1] == lab[1] + real[1] and both[2] == lab[2] + real[2]
        assert all(d + u == t and r <= d for r, d, u, t in (lab, real, both))
        assert -1 <= float(values["inst_r_ent"]) <= 1


class TestPredicting(SmokeChapter):
    chapter = "predicting"

    def test_predicting_smoke_scores_every_sequence_under_every_run(self, smoke):
        values = glued_values(smoke("predicting"))
        # 6 tasks x 4 copy levels x 1 sequence, scored under the smoke lab's 22 runs but its 3 ablations
        assert values["n_sequences"] == "24"
        assert values["n_scored"] == str(24 * 19)
        assert values["ctrl_pos"] == "0"  # no smoke model reproduces a sequence it never saw


class TestDistributional(SmokeChapter):
    chapter = "distributional"

    def test_distributional_smoke_runs_the_method_on_the_ladder(self, smoke):
        values = glued_values(smoke("distributional"))
        # the smoke lab: 40 facts, 4 ladder runs
        assert values["n_facts"] == "40" and values["n_models"] == "4"
        assert int(values["n_errors"]) == 0
        # the authors' effective threshold (0.002) keeps every candidate; the paper's keeps fewer
        assert values["k3_authors"] == values["k3_total"]
        assert int(values["k3_paper"].replace(",", "")) < int(values["k3_total"].replace(",", ""))
        lo, hi = (float(v) for v in values["knowledge_3_range"].split(" to "))
        assert -1 <= lo <= hi <= 1


@pytest.fixture(scope="module")
def smoke_html(smoke, smoke_site):
    """The site built from every chapter's smoke execution (each executed here, or
    waited for if another process is executing it)."""
    assert chapters()
    for name in chapters():
        smoke(name)
    proc = subprocess.run(
        [JUPYTER_BOOK, "build", str(smoke_site), "-W", "--keep-going"],
        capture_output=True, text=True, timeout=900,
    )
    return smoke_site, proc


class TestSite:
    """The book built from every chapter's smoke execution, and opened in a browser."""

    def test_book_builds_from_the_executed_chapters(self, smoke_html):
        site, proc = smoke_html
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        page = (site / "_build" / "html" / "book" / "chapters" / "phrases.html").read_text()
        assert 'class="phrase-explorer"' in page  # the static explorer is in the page
        assert page.count("<img") >= 4  # the four glued figures
        assert "Wilson" in page and "smollm2-135m-instruct" in page
        for name in chapters():  # every glued value was resolved: none is left as markup or code
            text = (site / "_build" / "html" / "book" / "chapters" / f"{name}.html").read_text()
            assert "{glue" not in text, f"{name}: unresolved glue markup in the page"

    @pytest.mark.skipif(not have_browser(),
                        reason="no Chromium: apt-get install -y chromium (nox -s site installs it)")
    def test_smoke_site_passes_the_browser_check(self, smoke_html):
        """Every page of the smoke book opened in headless Chromium (scripts/check_site.py):
        no JavaScript error, no request outside the site, math rendered, images loaded,
        no glue placeholder, the explorers respond, search finds a word. Screenshots go
        to _build/screenshots/smoke/."""
        from check_site import check_site

        site, proc = smoke_html
        assert proc.returncode == 0, proc.stdout[-3000:]
        reports, failures = check_site(site / "_build" / "html", ROOT / "_build" / "screenshots" / "smoke",
                                       search="memorization", progress=False)
        assert failures == []
        checked = {r.page for r in reports}
        assert {f"book/chapters/{name}.html" for name in chapters()} <= checked
        assert sum(r.explorers for r in reports) >= 2  # the phrases chapter's two explorers
        for r in reports:  # every chapter page offers its executed notebook for download
            if r.page.startswith("book/chapters/"):
                notebook = Path(r.page).with_suffix(".ipynb").name
                assert any(u.endswith(notebook) for u in r.downloads), r.page
        assert sum(r.math for r in reports) > 0


@pytest.mark.parametrize(
    "params, needle",
    [({"profile": "fast"}, "profile must be one of"), ({"models": "gpt5"}, "unknown model 'gpt5'"),
     ({"n_per_type": 0}, "n_per_type must be an integer in [1, inf], got 0")],
)
def test_bad_parameter_fails_at_the_top(tmp_path, params, needle):
    params = {"profile": "smoke", **params}
    with pytest.raises(pm.PapermillExecutionError) as err:
        execute("phrases", params, tmp_path)
    assert needle in str(err.value)
    nb = json.loads((tmp_path / "phrases.ipynb").read_text())
    executed = [c for c in nb["cells"] if c["cell_type"] == "code" and c.get("execution_count")]
    assert len(executed) <= 3  # parameters, injected parameters, the validating cell
    assert not any("load_model" in "".join(c["source"]) for c in executed)


def test_predicting_bad_target_fails_before_work(tmp_path):
    with pytest.raises(pm.PapermillExecutionError) as err:
        execute("predicting", {"profile": "smoke", "targets": "wide-32"}, tmp_path)
    assert "targets must name runs of the 'smoke' lab with an exposure table" in str(err.value)
