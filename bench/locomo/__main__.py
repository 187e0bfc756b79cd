"""``python -m bench.locomo`` (or ``python bench/locomo``): see ``bench.locomo``."""

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as ``python bench/locomo``: the repository's packages
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.locomo.cli import main

raise SystemExit(main())
