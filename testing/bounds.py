"""The one bound for failures in tests: how long a test waits for something that must happen.

A test waits for a condition (a line in a log, a process gone, a request recorded), never for a
time. The bound only ends a wait that would otherwise never end, so it is set for the slowest
machine CI runs on: two cores with two busy loops on each and other work beside them
(``python -m testing.loaded_ci``), where a background run that takes a second alone can take a
minute. A passing test never waits for it; a failing one reports after it.
"""

FAILURE_SECONDS = 300.0
