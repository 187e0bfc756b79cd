"""``python -m bench.reliability`` (or ``python bench/reliability``): see ``bench.reliability``."""

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as ``python bench/reliability``: the repository's packages
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.reliability.cli import main

raise SystemExit(main())
