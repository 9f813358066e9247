"""Execute the chapter notebooks with papermill into book/chapters/.

    python scripts/execute_chapters.py --profile default [--chapters phrases ...] [-p NAME=VALUE ...]
    python scripts/execute_chapters.py --list-params size
    python scripts/execute_chapters.py --plan --profile paper --chapters size -p models=api:ID --price 0.1,0.6

Every ``-p`` is checked against the selected chapters' declared parameters
(``analysis.book.chapters``) before any kernel starts: an unknown name, a name no
selected chapter declares, a bad type or value, or a missing or unreadable file
fails at once, naming the parameter and the allowed values. A parameter goes
only to the chapters that declare it.

Each MyST source in notebooks/ is converted with jupytext, executed with
papermill (parameters injected after its ``parameters`` cell) and written to
book/chapters/<name>.ipynb, where the book build (execute_notebooks: off)
picks it up. The run ends with a summary per chapter (wall time, queries,
model calls, cache hits, errors); it exits non-zero when a chapter fails or
measured nothing (every query to one of its models ended in an error: a wrong
key, an unreachable endpoint), and with ``--strict`` also when any query ended in
an error. A chapter stops at the first sign that it cannot measure: once an API
model's endpoint has refused the key or cannot be reached, and every query to the
model so far failed, the next cell that needs the model fails ("measured
nothing"), before the lab's training or any other model's work. ``--keep-going``
(``MEMBOOK_KEEP_GOING=1`` in the kernels' environment) runs the rest of such a
chapter, every answer of that model an error, as before; it still fails. A default-profile
execution writes each chapter's glued values, with its profile, parameters and
commit, to results/<chapter>.json. Wall times go to book/chapters/_timings.json.

``--jobs N`` runs the lab page first, then the other chapters N at a time, each
kernel on cores / N threads: a warm re-run takes about half the time on two cores
(see ``run`` for what it can change in a cold one).

``--plan`` executes nothing: it prints, per selected chapter, the queries the
execution would send to each model, their prompt and completion tokens, and with
``--price IN,OUT`` (US dollars per million tokens) the cost of the API queries
(see ``analysis.book.plan``).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import jupytext
import papermill as pm

ROOT = Path(__file__).resolve().parents[1]
from analysis.book.chapters import check_overrides, declaration  # noqa: E402
from analysis.book.plan import PlanError, chapter_plan, parse_price, totals  # noqa: E402
from analysis.book.plan import table as plan_table  # noqa: E402
from analysis.core import jsonio  # noqa: E402
from analysis.lab.train.devices import default_threads as available_cores  # noqa: E402
from analysis.models.base import KEEP_GOING_ENV, MEASURED_NOTHING, nothing_measured  # noqa: E402
from analysis.params import PROFILE_NAMES, ParameterError, without_api_keys  # noqa: E402

SOURCES = ROOT / "notebooks"
OUT = ROOT / "book" / "chapters"
RESULTS = ROOT / "results"
USAGE_KEYS = ("run_queries", "run_calls", "run_hits", "run_errors")


def chapters() -> list[str]:
    """Every chapter source, in the book's order (``_toc.yml``), so the lab page runs
    before the chapters that use its models; sources not in the table of contents
    come last, alphabetically."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    listed = [Path(entry["file"]).name for entry in toc.get("chapters", [])]
    names = {p.stem for p in SOURCES.glob("*.md")}
    return [n for n in listed if n in names] + sorted(names - set(listed))


def _quiet_kernel_manager():
    """The kernel manager papermill starts each chapter's kernel with: jupyter_client's,
    except that shutting a kernel down does not interrupt it first.

    ``shutdown_kernel`` sends the kernel a SIGINT before its shutdown request. A
    kernel that is idle ignores it; one still inside a message handler (flushing its
    last output, answering a status request) raises KeyboardInterrupt there and
    ipykernel logs ``KeyboardInterrupt caught in kernel`` on stderr, after a run that
    succeeded (about one in 14 runs). Papermill shuts a kernel down only when no cell
    is running (a cell that ran past its time is interrupted by nbclient on its own),
    so the interrupt has nothing to stop."""
    from jupyter_client import AsyncKernelManager

    class QuietShutdown(AsyncKernelManager):
        async def _async_interrupt_kernel(self) -> None:
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

    return QuietShutdown


def execute(name: str, parameters: dict, out_dir: Path = OUT) -> float:
    """Execute one chapter; return its wall time in seconds."""
    out_dir.mkdir(parents=True, exist_ok=True)
    raw = out_dir / f"{name}.src.ipynb"
    jupytext.write(jupytext.read(SOURCES / f"{name}.md"), raw)
    t0 = time.time()
    try:
        pm.execute_notebook(
            str(raw),
            str(out_dir / f"{name}.ipynb"),
            parameters=parameters,
            kernel_name="python3",
            cwd=str(ROOT),
            progress_bar=False,
            log_output=True,
            kernel_manager_class=_quiet_kernel_manager(),
        )
    finally:
        raw.unlink(missing_ok=True)
        tidy_notebook(out_dir / f"{name}.ipynb")
    return time.time() - t0


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def tidy_notebook(path: Path) -> None:
    """Prepare an executed chapter for the site:

    * tag papermill's injected-parameters cell ``remove-cell`` (the chapter's Setup
      table shows the parameters of the run in words);
    * drop widget outputs and the notebook's widget state. They are the progress
      bars of a live run (tqdm draws them as ipywidgets in a kernel), and a page
      that keeps them loads a widget manager from a CDN, so it would not work
      offline.
    """
    if not path.exists():
        return
    nb = json.loads(path.read_text())
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
        if "outputs" in cell:
            cell["outputs"] = [o for o in cell["outputs"] if WIDGET_VIEW not in o.get("data", {})]
    jsonio.write(path, nb, ensure_ascii=False)


def glued_values(notebook: Path) -> dict[str, str]:
    """Every glued text value of an executed chapter (figures left out): plain text,
    or the Markdown of a glued Markdown value."""
    nb = json.loads(notebook.read_text())
    values = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            record = out.get("metadata", {}).get("scrapbook", {})
            name, prefix = record.get("name"), record.get("mime_prefix", "")
            data = {k.removeprefix(prefix): v for k, v in out.get("data", {}).items()}
            if not name or any(k.startswith("image/") for k in data):
                continue
            text = data.get("text/markdown") or data.get("text/plain")
            if text is not None:
                text = "".join(text)
                values[name] = text[1:-1] if text[:1] == text[-1:] and text[:1] in "'\"" else text
    return values


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _commit() -> str:
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "src", "notebooks", "data")
    return head + ("-dirty" if dirty else "")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def write_results(name: str, profile: str, params: dict, seconds: float, values: dict, commit: str,
                  results_dir: Path = RESULTS) -> Path:
    """``results/<name>.json``: the chapter's glued values, profile, parameters and the
    commit it was executed from."""
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{name}.json"
    usage = {k.removeprefix("run_"): _value(values[k]) for k in USAGE_KEYS if k in values}
    values = dict(values)
    if "run_models" in values:
        usage["models"] = json.loads(values.pop("run_models"))
    # the chapter's claims (report.glue_claims), each with its status and reason
    claims = json.loads(values.pop("claims")) if "claims" in values else []
    record = {"chapter": name, "profile": profile, "params": params, "commit": commit,
              "executed": _now(), "seconds": round(seconds, 1),
              "usage": usage, "claims": claims, "values": dict(sorted(values.items()))}
    # the lab's runs: weights hash and final losses (lab page, analysis.lab.fingerprint)
    if "lab_fingerprints" in record["values"]:
        record["fingerprints"] = json.loads(record["values"].pop("lab_fingerprints"))
    return jsonio.write(path, record, ensure_ascii=False)


def measured_nothing(values: dict) -> list[str]:
    """The models of an executed chapter that were asked something and answered
    nothing: every one of their queries ended in an error (a wrong key, an
    unreachable endpoint). Read from the chapter's glued ``run_models``
    (:func:`analysis.book.report.glue_usage`); one line per model, for the summary."""
    models = json.loads(values.get("run_models") or "[]")
    return [nothing_measured(m["model"], m["queries"], m.get("last_error"))
            for m in models if m["queries"] > 0 and m["errors"] == m["queries"]]


#: the exception a chapter's cell raises when one of its models cannot measure
#: (:class:`analysis.models.base.CannotMeasure`): the chapter measured nothing
CANNOT_MEASURE = "CannotMeasure"


@contextlib.contextmanager
def keep_going(on: bool):
    """With ``on``, ``MEMBOOK_KEEP_GOING=1`` in this process's environment (which the
    chapters' kernels inherit) while the block runs; the environment as it was after."""
    before = os.environ.get(KEEP_GOING_ENV)
    if on:
        os.environ[KEEP_GOING_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(KEEP_GOING_ENV, None)
        else:
            os.environ[KEEP_GOING_ENV] = before


def summary_table(rows: list[dict]) -> str:
    head = ("chapter", "status", "seconds", "queries", "calls", "hits", "errors")
    lines = [head] + [tuple(str(r.get(k, "—")) for k in head) for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)) for line in lines)


def plan_tables(names, profile: str, per_chapter: dict, price=None):
    """``{chapter: plan table or None}`` for the selected chapters (None: the chapter
    queries the lab's models only and has no plan)."""
    out = {}
    for name in names:
        params = declaration(name).resolve(profile, **per_chapter[name])
        groups = chapter_plan(name, params)
        out[name] = None if groups is None else plan_table(name, groups, price)
    return out


def print_plan(names, profile: str, per_chapter: dict, price, out_dir: Path = OUT) -> None:
    """Print the plan of every selected chapter, then the totals."""
    import pandas as pd

    timings_file = out_dir / "_timings.json"
    timings = json.loads(timings_file.read_text()) if timings_file.exists() else {}
    frames = []
    for name, frame in plan_tables(names, profile, per_chapter, price).items():
        if frame is None:
            last = timings.get(name, {})
            seen = (f"; its last {last['profile']} execution made {last['usage']['queries']} queries"
                    if last.get("usage") else "")
            print(f"{name} ({profile}): queries the lab's models only, nothing to pay{seen}\n")
            continue
        frames.append(frame)
        shown = frame.drop(columns=["chapter"])
        print(f"{name} ({profile}):")
        print(shown.to_string(index=False, formatters={
            c: "{:,}".format for c in ("queries", "prompt_tokens", "completion_tokens")} | (
            {"cost": "${:,.2f}".format} if "cost" in shown else {})))
        print()
    if frames:
        t = totals(pd.concat(frames, ignore_index=True))
        line = (f"total: {t['queries']:,} queries ({t['exact_queries']:,} certain, the rest at most), "
                f"{t['api_queries']:,} to API models; {t['prompt_tokens']:,} prompt tokens, "
                f"at most {t['completion_tokens']:,} completion tokens")
        if "cost" in t:
            line += f"; API cost between ${t['exact_cost']:,.2f} and ${t['cost']:,.2f}"
        print(line)


class OutputBusy(RuntimeError):
    """Another execution is writing to the same output folder."""


LOCK_NAME = ".execute.lock"


@contextlib.contextmanager
def hold_output(out_dir: Path):
    """Hold ``out_dir`` for one execution: a second execution writing there (its
    notebooks and ``_timings.json``) is refused with the holder's process id,
    instead of the two overwriting each other. The lock is released when the
    process ends, however it ends."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / LOCK_NAME
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise OutputBusy(f"another execution (pid {holder}) is writing to {out_dir}; wait for it to end, "
                         "or give this one its own folder with --out (and --results)") from None
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield path
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default", choices=PROFILE_NAMES)
    ap.add_argument("--chapters", nargs="*", default=None, help=f"default: all of {chapters()}")
    ap.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                    help="a chapter parameter (a JSON value or a string); see --list-params")
    ap.add_argument("--list-params", metavar="CHAPTER", help="print a chapter's parameters and exit")
    ap.add_argument("--strict", action="store_true", help="exit non-zero when any query ended in an error")
    ap.add_argument("--keep-going", action="store_true",
                    help="when every query to a model fails (a refused key, an unreachable endpoint), run "
                         "the rest of the chapter, every answer of that model an error, instead of stopping "
                         f"at the next cell that needs it (sets {KEEP_GOING_ENV}=1 for the kernels); the "
                         "chapter still fails as one that measured nothing")
    ap.add_argument("--out", type=Path, default=OUT, help="where the executed notebooks go")
    ap.add_argument("--results", type=Path, default=RESULTS,
                    help="where a default execution writes its values")
    ap.add_argument("--jobs", type=int, default=1, metavar="N",
                    help="execute N chapters at a time after the lab page (default 1: one after the other)")
    ap.add_argument("--plan", action="store_true",
                    help="execute nothing: print the queries and tokens each chapter would send")
    ap.add_argument("--price", metavar="IN,OUT",
                    help="with --plan: US dollars per million prompt and completion tokens of the API model")
    args = ap.parse_args(argv)
    try:
        price = parse_price(args.price)
        if price is not None and not args.plan:
            raise ParameterError("--price goes with --plan")
        if not 1 <= args.jobs <= available_cores():
            raise ParameterError(f"--jobs takes a whole number from 1 to {available_cores()} (the cores "
                                 f"this process may use), got {args.jobs}")
        if args.list_params:
            print(declaration(args.list_params).describe())
            return 0
        # "--chapters phrases,size" and "--chapters phrases size" are the same selection
        names = [n.strip() for item in args.chapters or [] for n in item.split(",") if n.strip()]
        names = names or chapters()
        for name in names:
            declaration(name)  # an unknown chapter fails here, with the nearest names
        missing = [n for n in names if n not in chapters()]
        if missing:
            raise ParameterError(f"chapters {missing} have no source in notebooks/")
        overrides = {}
        for item in args.param:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ParameterError(f"-p takes NAME=VALUE, got {item!r}")
            overrides[key.strip()] = _value(value)
        if args.plan:  # a plan sends nothing, so it needs no API key
            with without_api_keys():
                per_chapter = check_overrides(names, args.profile, overrides)
                print_plan(names, args.profile, per_chapter, price, args.out)
            return 0
        per_chapter = check_overrides(names, args.profile, overrides)
    except (ParameterError, PlanError) as err:
        print(f"execute_chapters.py: error: {err}", file=sys.stderr)
        return 2
    try:
        with hold_output(args.out), keep_going(args.keep_going):
            return run(names, args, per_chapter)
    except OutputBusy as err:
        print(f"execute_chapters.py: error: {err}", file=sys.stderr)
        return 2


#: chapters that run alone, before any other, when chapters run in parallel: the lab
#: page builds every lab run the other chapters load, so none of them trains one
RUN_FIRST = ("lab",)


def _job(name: str, params: dict, out_dir: Path, threads: int | None = None):
    """Execute one chapter (in this process, or in a worker of ``--jobs``): its wall
    seconds and None, or None and the failed cell's ``(ename, evalue)``. With ``threads`` the
    chapter's kernel sees ``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` = ``threads``, so
    that parallel kernels share the cores instead of each taking all of them."""
    if threads:
        os.environ.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    try:
        return execute(name, params, out_dir), None
    except pm.PapermillExecutionError as err:
        return None, (err.ename, err.evalue)


def run(names: list[str], args, per_chapter: dict) -> int:
    """Execute the selected chapters; print the summary; the exit code.

    With ``--jobs 1`` (the default) the chapters run one after the other in the
    book's order. With ``--jobs N`` the lab page runs first, alone, then the other
    chapters run N at a time, the longest of their last executions first, each
    kernel with cores / N torch threads. A warm re-run (every answer cached) gives
    the same values either way. A cold one may not: a model's floating-point sums can
    depend on its number of threads, so an answer generated on 1 thread can differ
    from one generated on 2 (the query cache keeps whichever came first)."""
    timings_file = args.out / "_timings.json"
    timings = json.loads(timings_file.read_text()) if timings_file.exists() else {}
    rows: dict[str, dict] = {}
    failed = False

    def finish(name: str, params: dict, commit: str, seconds: float | None,
               error: tuple[str, str] | None) -> None:
        nonlocal failed
        row = {"chapter": name}
        if error is not None:
            failed = True
            if error[0] == CANNOT_MEASURE:
                # stopped at its first sign (a refused key, an unreachable endpoint): the
                # error names the model and its last error
                rows[name] = {**row, "status": f"failed: {MEASURED_NOTHING}"}
                print(f"{name}: failed: {error[1]}", file=sys.stderr)
                return
            rows[name] = {**row, "status": f"failed: {error[0]}"}
            print(f"{name}: failed: {error[0]}: {error[1]}", file=sys.stderr)
            return
        values = glued_values(args.out / f"{name}.ipynb")
        dead = measured_nothing(values)
        row.update(status=f"failed: {MEASURED_NOTHING}" if dead else "ok", seconds=f"{seconds:.1f}",
                   **{k.removeprefix("run_"): values.get(k, "—") for k in USAGE_KEYS})
        rows[name] = row
        if dead:
            # a run that measured nothing is a failure, with or without --strict, and
            # it never replaces the chapter's committed results
            failed = True
            for line in dead:
                print(f"{name}: failed: {line}", file=sys.stderr)
            return
        timings[name] = {"profile": args.profile, "seconds": round(seconds, 1), "params": params,
                         "usage": {k: row[k] for k in ("queries", "calls", "hits", "errors")},
                         "commit": commit, "executed": _now()}
        if args.jobs > 1:
            timings[name]["jobs"] = args.jobs
        jsonio.write(timings_file, timings, newline=False)
        if args.profile == "default":
            write_results(name, args.profile, params, seconds, values, commit, args.results)
        print(f"{name}: {seconds:.1f} s", file=sys.stderr)

    def params_of(name: str) -> dict:
        return {"profile": args.profile, **per_chapter[name]}

    alone = names if args.jobs == 1 else [n for n in names if n in RUN_FIRST]
    for name in alone:
        commit = _commit()  # the code this execution runs, read before it starts
        finish(name, params_of(name), commit, *_job(name, params_of(name), args.out))
    rest = sorted((n for n in names if n not in alone),
                  key=lambda n: -timings.get(n, {}).get("seconds", 0.0))
    if rest:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        threads = max(1, available_cores() // args.jobs)
        fork = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=fork) as pool:
            commit = _commit()
            futures = {pool.submit(_job, n, params_of(n), args.out, threads): n for n in rest}
            for future in as_completed(futures):
                name = futures[future]
                finish(name, params_of(name), commit, *future.result())
    print(summary_table([rows[n] for n in names if n in rows]))
    errors = sum(int(r["errors"]) for r in rows.values() if str(r.get("errors", "")).isdigit())
    if failed:
        return 1
    if args.strict and errors:
        print(f"--strict: {errors} queries ended in an error", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
