"""The front ends: how a person or a program reaches gitmem.

- ``cli/``: the command line (click), each command one typed call whose result prints as JSON or
  text;
- ``mcp_server.py``: ``gitmem mcp``, the same calls as Model Context Protocol tools;
- ``warm/``: ``gitmem serve`` (``server.py``) and the thin client ``gitmem`` asks first
  (``client.py``, standard library only), with the user's list of warm processes
  (``registry.py``);
- ``terminal.py``: the one door to the terminal and the one place an outcome becomes an exit
  status.

Nothing below this package imports it. It imports nothing by itself: ``gitmem`` asks the warm
client before anything else is loaded.
"""
