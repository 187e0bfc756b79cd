"""One error hierarchy; each class carries its exit status (SPEC §13).

The CLI maps these to exit codes in exactly one place (``cli.run``).
"""

from __future__ import annotations


class GitmemError(Exception):
    """An error the user can fix. The message says how."""

    exit_code = 1


class UsageError(GitmemError):
    """Bad command-line usage or a bad value (for example a time spec)."""

    exit_code = 2


class LockBusy(GitmemError):
    """A lock (index writer, embedding job, reflect) is held by another process."""


class InternalError(GitmemError):
    """Something that should not happen; reported with a log path."""

    exit_code = 3


class SearchUnavailable(GitmemError):
    """An explicitly named embedding provider failed (SPEC §9)."""

    exit_code = 4

    def __init__(self, reason: str) -> None:
        super().__init__(f"memory search unavailable: {reason}")
