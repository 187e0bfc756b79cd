"""``gitmem merge-file``: git's merge driver for memory files (issue 20, docs/sync.md).

git calls ``gitmem merge-file %O %A %B %P`` (``merge.gitmem.driver``) with the common ancestor,
ours and theirs; the result goes to %A, exit 0 when clean, 1 with conflict markers left.

- Notes (daily notes, MEMORY.md, other append-mostly files), :mod:`.lines`: a line-wise
  three-way merge. Lines only one side changed are taken; lines both sides *added* at the same
  place are all kept, each once, in an order that does not depend on which side is ours (the two
  blocks sorted by their text), and a heading both sides added (``## Retain``) stays one
  section. Both sides changing the same existing lines differently is a real conflict, left as
  one.
- Entity pages, :mod:`.page_blocks`: a generated block both sides regenerated is taken from one side
  and its begin marker says ``stale``: the next ``gitmem reflect`` writes the block again. Human
  text around it merges as a note.
- ``bank/opinions.md``, :mod:`.opinion_sections`: merged per opinion section by id; a section both
  sides changed gets a ``<!-- gitmem:stale … -->`` line that the next reflect recomputes it by.
- Anything else (not UTF-8, a NUL byte, over ``MAX_BYTES``): git's own ``git merge-file``.

:mod:`.registration` sets the driver up in a clone (``.gitattributes`` and ``merge.gitmem.*``)
and says whether it is; git's config names the command ``gitmem merge-file``, never a module.

git starts one driver process per file both sides changed, so :mod:`.driver` and
:mod:`.lines` import no more than a daily note's merge needs (no ``re``, ``pathlib``,
``dataclasses`` or ``difflib`` on that path): the process costs little more than Python's start.
This package imports nothing by itself.
"""
