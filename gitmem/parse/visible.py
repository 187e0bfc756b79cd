"""Memory text made safe to show: characters that drive a terminal or reorder what it shows
become visible escapes.

A memory file may hold terminal escapes (ESC, BEL, CSI, OSC), other control characters or
bidirectional overrides, written by an agent that copied them from a web page, say. Whatever
gitmem prints, and whatever reflect writes into files a person reviews, shows them as text
instead: ``\\x1b`` for a control character (C0, DEL, C1), ``\\u202e`` for a bidirectional
embedding, override or isolate. Every character stays visible and nothing is dropped; tab and
line feed are kept. JSON keeps the exact text (as JSON escapes, the same string to a parser).
"""

from __future__ import annotations

import json
import re
from typing import Any

# Controls: C0 but tab and line feed, DEL, C1 (U+009B is CSI on 8-bit terminals). Bidi:
# embeddings and overrides U+202A-U+202E, isolates U+2066-U+2069 ("Trojan Source").
_CONTROLS = (*(c for c in range(0x20) if c not in (0x09, 0x0A)), 0x7F, *range(0x80, 0xA0))
_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
_AS_TEXT = {c: f"\\x{c:02x}" for c in _CONTROLS} | {c: f"\\u{c:04x}" for c in _BIDI}
_HIDDEN_RE = re.compile("[" + "".join(re.escape(chr(c)) for c in _AS_TEXT) + "]")
# What json.dumps leaves raw that a terminal acts on (it escapes C0 itself).
_JSON_RAW = {c: f"\\u{c:04x}" for c in (0x7F, *range(0x80, 0xA0), *_BIDI)}
_JSON_RAW_RE = re.compile("[" + "".join(re.escape(chr(c)) for c in _JSON_RAW) + "]")
# str.translate looks every character up in its table (~1 ms for a recall's 20 kB of JSON);
# a search for the few it rewrites is ~10 times faster, and nearly always finds none.


def visible(text: str) -> str:
    """``text`` with every control and bidirectional-override character written as an escape
    (``\\x1b``, ``\\u202e``); other characters, tab and line feed unchanged."""
    return text.translate(_AS_TEXT) if _HIDDEN_RE.search(text) else text


def hidden_characters(text: str) -> list[str]:
    """The distinct characters of ``text`` that :func:`visible` rewrites, in order."""
    return list(dict.fromkeys(_HIDDEN_RE.findall(text)))


def visible_json(data: Any, indent: int | None) -> str:
    """JSON of ``data`` (non-ASCII kept) in which no character can drive a terminal: the
    ones ``json.dumps`` leaves raw are written as ``\\u`` escapes (the same string to a
    parser; they occur only inside strings)."""
    text = json.dumps(data, ensure_ascii=False, indent=indent)
    return text.translate(_JSON_RAW) if _JSON_RAW_RE.search(text) else text
