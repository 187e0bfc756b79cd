"""``gitmem`` and ``python -m gitmem``: a warm process answers when one serves the repository
(``gitmem.front.warm.client``, standard library only); otherwise the command line runs here
(``gitmem.front.cli``). git's merge driver (``merge-file BASE OURS THEIRS [PATH]`` on three existing
files) runs without the command line's imports: git starts one per merged memory file."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    # Like other Unix tools: 'gitmem recall x | head -1' ends quietly when the reader is gone.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    args = sys.argv[1:]
    if args[:1] == ["merge-file"] and len(args) in (4, 5) and all(map(_is_file, args[1:4])):
        from gitmem.merge.driver import run_driver

        sys.exit(run_driver(*args[1:]))
    from gitmem.front.warm.client import try_warm

    code = try_warm(args)
    if code is not None:
        sys.exit(code)
    from gitmem.front.cli import main as cli_main

    cli_main()


def _is_file(path: str) -> bool:
    import os

    return os.path.isfile(path)


if __name__ == "__main__":
    main()
