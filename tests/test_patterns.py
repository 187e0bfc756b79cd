"""Regular expressions built from the interpreter's cached programs (gitmem.parse.patterns):
the very patterns re.compile makes, without compiling them again in the next process."""

from __future__ import annotations

import marshal
import os
import re
import subprocess
import sys
from pathlib import Path

from gitmem.parse import patterns
from gitmem.parse.patterns import compiled

SAMPLES = [
    (r"(?P<y>\d{4})-(?P<m>\d{2})", 0),
    (r"\b(?:moved|now|no longer)\b|теперь|引っ越", 0),
    (r"\btoday\b|今日", re.IGNORECASE),
    (r"(\d+)\s*([hdwmy])", re.ASCII),
    ("[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]+", 0),
    (r"^(?P<kind>[A-Za-z])(?:\(c=(?P<c>[^)]*)\))?:\s?(?P<text>.*)$", re.DOTALL),
]
TEXTS = ["2025-11 moved to Lisbon", "теперь в Берлине", "今日 引っ越した", "3 d 4w", "W(c=0.9): x\ny",
         "TODAY", "김치 カタカナ 漢字"]

# A child interpreter: compile SAMPLES through the cache, with re's own compiler refused when
# asked to (so a pattern that was not built from the file fails loudly), and print the results.
CHILD = r"""
import json, re, sys
from re import _compiler
import gitmem.config  # its imports (dataclasses) compile their own patterns
if sys.argv[1] == "refuse":
    def refuse(*args, **kwargs):
        raise AssertionError("re compiled a pattern the cache holds")
    _compiler.compile = refuse
from gitmem.parse.patterns import compiled
samples = json.loads(sys.argv[2])
texts = json.loads(sys.argv[3])
out = []
for pattern, flags in samples:
    rx = compiled(pattern, flags)
    out.append([rx.pattern, rx.flags, sorted(rx.groupindex.items()), rx.groups,
                [[m.span() for m in rx.finditer(t)] for t in texts]])
print(json.dumps(out))
"""


def _child(mode: str, env: dict[str, str]) -> str:
    import json

    proc = subprocess.run([sys.executable, "-c", CHILD, mode, json.dumps(SAMPLES),
                           json.dumps(TEXTS)], capture_output=True, text=True, env=env,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _expected() -> str:
    import json

    out = []
    for pattern, flags in SAMPLES:
        rx = re.compile(pattern, flags)
        out.append([rx.pattern, rx.flags, sorted(rx.groupindex.items()), rx.groups,
                    [[list(m.span()) for m in rx.finditer(t)] for t in TEXTS]])
    return json.dumps(out) + "\n"


def _cache_file(home: Path) -> Path:
    return home / "gitmem" / f"regex-{sys.implementation.cache_tag}.marshal"


def test_the_next_process_builds_the_same_patterns_from_the_cache(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    assert _child("compile", env) == _expected()  # compiled by re, programs written at exit
    assert _cache_file(tmp_path).is_file()
    assert _child("refuse", env) == _expected()  # every one built from its program


def test_a_damaged_or_foreign_cache_is_compiled_again_and_rewritten(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    path = _cache_file(tmp_path)
    path.parent.mkdir(parents=True)
    for content in (b"not marshal data \x00\xff",
                    marshal.dumps(((0, "another python", 0, 0), {})),
                    marshal.dumps(("stamp", {("x", 0): ("y", 0, [1, 2, 3], 0, {}, ())}))):
        path.write_bytes(content)
        assert _child("compile", env) == _expected()
        assert _child("refuse", env) == _expected()


def test_a_wrong_program_is_not_used() -> None:
    """An entry whose program is not valid SRE code is compiled by re instead."""
    programs = patterns._Programs()
    programs.known = {("a+", 0): ("a+", 32, [999, 999], 0, {}, ())}
    assert programs.build(programs.known[("a+", 0)]) is None


def test_no_cache_folder_still_compiles(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would be", encoding="utf-8")
    env = {**os.environ, "XDG_CACHE_HOME": str(blocker)}
    assert _child("compile", env) == _expected()


def test_in_process_patterns_equal_re_compile() -> None:
    for pattern, flags in SAMPLES:
        assert compiled(pattern, flags) == re.compile(pattern, flags)
