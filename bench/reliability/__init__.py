"""Reliability benchmarks (issue 10, RELIABILITY.md): crash consistency under SIGKILL,
concurrency and load, history rewrites at scale, and the cost of the parse-pool variants.

    python -m bench.reliability crash --trials 200
    python -m bench.reliability load --seconds 60
    python -m bench.reliability rewrites --ops 500
    python -m bench.reliability pool

Each scenario runs against generated workspaces in a scratch folder, with a hermetic git and
gitmem environment, prints a summary and merges its figures into
``bench/results/reliability.json``. The test suite runs a small sample of each
(tests/test_crash.py, tests/test_load.py, tests/test_rewrites.py).
"""
