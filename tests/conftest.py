"""Settings shared by the whole test suite."""

import os

# the lab trains on the CPU in the tests, even on a machine with a GPU: their run paths and
# bit-identity checks (resume, forks) are those of one CPU process; set MEMBOOK_LAB_DEVICE
# to run them elsewhere
os.environ.setdefault("MEMBOOK_LAB_DEVICE", "cpu")
