"""Proposed edits to MEMORY.md: written as a patch for a person to review, never
applied by reflect.

The rule is about opinions, and it is a function of the memory as it stands (so a second run
proposes the same thing): an opinion held at ``propose_at`` or more, with at least
``propose_evidence`` evidence entries, that MEMORY.md does not mention (by id or by a line that
says the same thing about the same entity) is proposed for a "## Opinions" section; a MEMORY.md
list item that names an opinion now below ``drop_below`` is proposed for removal.

The patch lives in ``bank/proposals/MEMORY.md.patch``: not a ``.md`` file, so it is never indexed
as memory (its lines are not facts and cannot feed back into reflect), and inside the workspace,
so ``--commit`` puts it in the pull request next to the opinion changes that caused it. Apply it
from the repository root with ``git apply``; deleting it declines the proposal for now (it is
proposed again while the reason holds).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gitmem.domain import Opinion
from gitmem.parse.retain import ENTITY_RE, entity_key, find_entities
from gitmem.parse.similarity import same_claim
from gitmem.reflect.textfile import Editor, TextFile, split_text

PROPOSAL_PATH = "bank/proposals/MEMORY.md.patch"
_OPINIONS_HEADING = re.compile(r"^##\s+opinions\s*#*\s*$", re.I)
_HEADING = re.compile(r"^#{1,2}\s")
_ITEM = re.compile(r"^\s*[-*+]\s+\S")


@dataclass(frozen=True)
class ProposalParams:
    propose_at: float = 0.8
    propose_evidence: int = 3
    drop_below: float = 0.3


DEFAULT_PROPOSALS = ProposalParams()


@dataclass(frozen=True)
class Proposal:
    action: str  # add | remove
    opinion_id: str
    text: str  # the line added or removed
    line: int | None  # the MEMORY.md line removed
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"action": self.action, "opinion_id": self.opinion_id, "text": self.text,
                "line": self.line, "reason": self.reason}


def memory_line(op: Opinion) -> str:
    c = 0.0 if op.confidence is None else op.confidence
    return f"- {op.statement} (confidence {c:.2f}; {op.opinion_id} in bank/opinions.md)"


def _keys(text: str, canonical: Callable[[str], str]) -> list[str]:
    return sorted({canonical(entity_key(e)) for e in find_entities(text)})


def _says(line: str, keys: list[str], op: Opinion, op_keys: list[str]) -> bool:
    """Does a MEMORY.md line state the opinion (its id, or the same claim about an entity)?"""
    if op.opinion_id in line:
        return True
    return bool(set(keys) & set(op_keys)) and same_claim(
        ENTITY_RE.sub(" ", op.statement), op_keys, ENTITY_RE.sub(" ", line), keys)


def propose(memory: TextFile | None, opinions: Sequence[Opinion],
            canonical: Callable[[str], str], params: ProposalParams = DEFAULT_PROPOSALS,
            path: str = "MEMORY.md") -> list[Proposal]:
    lines = memory.lines if memory is not None else ()
    items = [(i, ln, _keys(ln, canonical)) for i, ln in enumerate(lines) if _ITEM.match(ln)]
    out: list[Proposal] = []
    for op in opinions:
        strong = (op.confidence is not None and op.confidence >= params.propose_at
                  and len(op.cited) >= params.propose_evidence)
        if op.confidence is None or not (strong or op.confidence < params.drop_below):
            continue
        op_keys = _keys(op.statement, canonical)
        said = [(i, ln) for i, ln, keys in items if _says(ln, keys, op, op_keys)]
        if strong and not said:
            out.append(Proposal("add", op.opinion_id, memory_line(op), None,
                                f"held at {op.confidence:.2f} on {len(op.cited)} evidence "
                                f"entries, and {path} does not say it"))
        elif not strong:
            out.extend(Proposal("remove", op.opinion_id, ln, i + 1,
                                f"{path}#L{i + 1} states {op.opinion_id}, now held at only "
                                f"{op.confidence:.2f}") for i, ln in said)
    return out


def proposed_text(memory: TextFile | None, proposals: Sequence[Proposal]) -> TextFile:
    """MEMORY.md with the proposals applied (the patch's right-hand side)."""
    text = memory if memory is not None else split_text(b"# Memory\n")
    editor = Editor(text)
    removed = {p.line - 1 for p in proposals if p.action == "remove" and p.line}
    editor.dropped.update(removed)
    adds = [p.text for p in proposals if p.action == "add"]
    if adds:
        section = _opinions_section(text)
        if section is None:
            gap = [""] if text.lines and text.lines[-1].strip() else []
            editor.append([*gap, "## Opinions", "", *adds])
        else:
            editor.insert_after(section, adds)
    return editor.result()


def _opinions_section(text: TextFile) -> int | None:
    """The last non-blank line of MEMORY.md's "## Opinions" section, if it has one."""
    start = next((i for i, ln in enumerate(text.lines) if _OPINIONS_HEADING.match(ln)), None)
    if start is None:
        return None
    last = start
    for i in range(start + 1, len(text.lines)):
        if _HEADING.match(text.lines[i]):
            break
        if text.lines[i].strip():
            last = i
    return last


def render_patch(memory: TextFile | None, proposals: Sequence[Proposal], repo_path: str,
                 proposal_repo_path: str) -> bytes:
    """A patch ``git apply`` takes from the repository root, with the reasons above it."""
    after = proposed_text(memory, proposals)
    head = [f"Proposed edits to {repo_path} by 'gitmem reflect'. Nothing here is applied "
            "automatically.",
            f"Review, then apply from the repository root: git apply {proposal_repo_path}",
            "(delete this file to decline; it is proposed again while the reason holds)", ""]
    for p in proposals:
        sign = "+" if p.action == "add" else "-"
        head.append(f"{sign} {p.opinion_id}: {p.reason}")
    head.append("")
    old = _with_endings(memory)
    new = _with_endings(after)
    a = f"a/{repo_path}" if memory is not None else "/dev/null"
    diff_head = [f"diff --git a/{repo_path} b/{repo_path}"]
    if memory is None:
        diff_head.append("new file mode 100644")
    body: list[str] = []
    for line in difflib.unified_diff(old, new, a, f"b/{repo_path}", n=3):
        ends = line.endswith(("\n", "\r"))
        body.append(line if ends else line + "\n\\ No newline at end of file\n")
    text = "\n".join(head) + "\n" + "\n".join(diff_head) + "\n" + "".join(body)
    return text.encode("utf-8", "surrogateescape")


def _with_endings(text: TextFile | None) -> list[str]:
    if text is None:
        return []
    prefix = [text.bom] + [""] * (len(text.lines) - 1) if text.lines else []
    return [p + ln + e for p, ln, e in zip(prefix, text.lines, text.endings, strict=True)]
