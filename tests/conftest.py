"""Settings and fixtures shared by the whole test suite."""

import os

import pytest

# the lab trains on the CPU in the tests, even on a machine with a GPU: their run paths and
# bit-identity checks (resume, forks) are those of one CPU process; set MEMBOOK_LAB_DEVICE
# to run them elsewhere
os.environ.setdefault("MEMBOOK_LAB_DEVICE", "cpu")


@pytest.fixture
def cache(tmp_path):
    """An empty query cache in the test's temporary folder (it replaces pytest's own
    ``cache`` fixture, which no test uses)."""
    from analysis.core.cache import QueryCache

    c = QueryCache(tmp_path / "queries.sqlite")
    yield c
    c.close()


@pytest.fixture
def server(request):
    """The fake OpenAI-compatible server (tests/fakeserver.py), accepting the test
    module's ``KEY``."""
    from fakeserver import FakeOpenAIServer

    with FakeOpenAIServer(api_key=request.module.KEY) as s:
        yield s
