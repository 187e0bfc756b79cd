"""gitmem: a git-native memory index with cited recall."""

from __future__ import annotations

__version__ = "0.1.0"
