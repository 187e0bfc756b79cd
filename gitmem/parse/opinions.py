"""bank/opinions.md (SPEC §5): one level-2 section per opinion, machine-readable lines.

```
## @Peter prefers concise WhatsApp replies (under 1500 chars)
<!-- opinion: o-3fa9c2e1 -->
- confidence: 0.82
- updated: 2025-12-02
- evidence:
  - for f-3fa9c2e11aa0 memory/2025-11-27.md#L12 (c=0.95)
```
"""

from __future__ import annotations

import hashlib
import re

from gitmem.domain import Evidence, Opinion, Warn
from gitmem.parse.retain import find_entities

OPINIONS_PATH = "bank/opinions.md"
_HEADING = re.compile(r"^##\s+(?P<statement>.+?)\s*#*\s*$")
_ID = re.compile(r"<!--\s*opinion:\s*(?P<id>o-[0-9a-f]{4,})\s*-->")
_FIELD = re.compile(r"^-\s*(?P<key>confidence|updated|evidence)\s*:\s*(?P<value>.*)$", re.I)
_EVIDENCE = re.compile(
    r"^\s+-\s*(?P<stance>for|against)\s+(?P<fact>f-[0-9a-f]+)\s+(?P<source>\S+)"
    r"(?:\s+\(c=(?P<c>[0-9.]+)\))?\s*$",
    re.I,
)


def opinion_id_for(statement: str) -> str:
    """The id given to an opinion section that has none: stable for its statement."""
    norm = re.sub(r"\s+", " ", statement).strip().casefold()
    return "o-" + hashlib.sha256(norm.encode("utf-8")).hexdigest()[:8]


def parse_opinions(lines: list[str], path: str = OPINIONS_PATH) -> tuple[list[Opinion], list[Warn]]:
    """Every level-2 section of the page is an opinion. Never raises."""
    starts = [i for i, ln in enumerate(lines) if _HEADING.match(ln)]
    opinions: list[Opinion] = []
    warns: list[Warn] = []
    for n, start in enumerate(starts):
        stop = starts[n + 1] if n + 1 < len(starts) else len(lines)
        while stop > start + 1 and not lines[stop - 1].strip():
            stop -= 1
        opinions.append(_section(lines, start, stop, path, warns))
    return opinions, warns


def _section(lines: list[str], start: int, stop: int, path: str, warns: list[Warn]) -> Opinion:
    m = _HEADING.match(lines[start])
    assert m is not None
    statement = m.group("statement")
    oid: str | None = None
    confidence: float | None = None
    updated: str | None = None
    evidence: list[Evidence] = []
    for i in range(start + 1, stop):
        line = lines[i]
        if (mid := _ID.search(line)) is not None:
            oid = mid.group("id")
        elif (mf := _FIELD.match(line)) is not None:
            key, value = mf.group("key").lower(), mf.group("value").strip()
            if key == "confidence":
                confidence = _confidence(value, path, i + 1, warns)
            elif key == "updated":
                updated = value or None
        elif (me := _EVIDENCE.match(line)) is not None:
            c = me.group("c")
            evidence.append(
                Evidence(
                    me.group("stance").lower(),
                    me.group("fact"),
                    me.group("source"),
                    _confidence(c, path, i + 1, warns) if c else None,
                )
            )
    if oid is None:
        oid = opinion_id_for(statement)
        warns.append(
            Warn(
                path,
                start + 1,
                "opinion-id",
                f"opinion has no '<!-- opinion: o-… -->' marker; using {oid}",
            )
        )
    return Opinion(
        oid,
        statement,
        tuple(find_entities(statement)),
        confidence,
        updated,
        tuple(evidence),
        start + 1,
        stop,
    )


def _confidence(value: str, path: str, line: int, warns: list[Warn]) -> float | None:
    try:
        c = float(value)
    except ValueError:
        c = -1.0
    if not 0.0 <= c <= 1.0:
        warns.append(
            Warn(
                path,
                line,
                "opinion-confidence",
                f"confidence '{value}' is not a number in [0, 1]; ignored",
            )
        )
        return None
    return c
