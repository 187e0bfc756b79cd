"""Helpers shared by gitmem's tests, fixture builder and benchmarks (not shipped in the wheel).

- ``gitenv``: git sealed from the user's and the system's configuration, with a fixed identity;
  the test suite's hermetic environment.
- ``repo``: small repositories built with the git command line (``git``, ``make_repo``, ``write``,
  ``commit_all``).
- ``fastimport``: long histories written in one ``git fast-import`` stream.
- ``synth``: the deterministic synthetic workspace (N years of daily notes) of benchmarks and tests.
- ``cli``: gitmem's command line run in-process or as a subprocess.
- ``index``: a canonical dump of a workspace's index.
- ``contract``: the keys of the JSON output, as reviewed.
- ``mcp``: ``gitmem mcp`` driven by the MCP SDK's own client over stdio.
- ``chromium``: Debian's headless Chromium over the DevTools protocol on a pipe.
- ``review_history``, ``review_page``: a memory that reflect commits moved, and its review
  comment rendered as GitHub shows it (cmark-gfm, Mermaid, Chromium).
"""
