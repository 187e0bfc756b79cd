"""``gitmem`` and ``python -m gitmem``: a warm process answers when one serves the repository
(``gitmem.warm.client``, standard library only); otherwise the command line runs here."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    # Like other Unix tools: 'gitmem recall x | head -1' ends quietly when the reader is gone.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    from gitmem.warm.client import try_warm

    code = try_warm(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from gitmem.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
