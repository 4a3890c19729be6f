"""BF Joust hill: engine, scoring, storage, history and reports."""

import os

# The hill does its own threading (jousts on every core); numpy's BLAS pool
# would only compete with it for the cores, spinning.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
