"""gitmem.records.dataclass: the standard library's dataclass, made on first use. Its instances
behave as dataclasses.dataclass's do, however the first one comes about."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
import threading
from dataclasses import field, replace

import pytest

from gitmem.domain import Citation, Fact
from gitmem.records import dataclass, made


def _pending(cls: type) -> bool:
    return "__dataclass_fields__" not in cls.__dict__


def _classes() -> tuple[type, type]:
    """A fresh frozen class and a fresh mutable one (never instantiated yet)."""

    @dataclass(frozen=True)
    class Point:
        x: int
        tags: tuple[str, ...] = field(default_factory=tuple)
        label: str = "p"

    @dataclass
    class Box:
        items: list[int] = field(default_factory=list)

    return Point, Box


def test_a_class_is_made_at_its_first_instance_as_the_standard_one() -> None:
    point, box = _classes()
    assert _pending(point) and _pending(box)
    p = point(1)
    assert not _pending(point) and _pending(box)
    assert (p, hash(p)) == (point(1), hash(point(1)))
    assert repr(p) == "_classes.<locals>.Point(x=1, tags=(), label='p')"  # as dataclass writes it
    assert p != point(2) and replace(p, x=2) == point(2)
    assert [f.name for f in dataclasses.fields(point)] == ["x", "tags", "label"]
    assert dataclasses.asdict(p) == {"x": 1, "tags": (), "label": "p"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        point()  # type: ignore[call-arg]
    b = box()
    b.items.append(1)
    assert b == box([1]) and box().items == []
    assert point.__init__ is not object.__init__ and "__setstate__" not in point.__dict__


def test_made_makes_a_pending_class_for_questions_about_the_class() -> None:
    point, _ = _classes()
    with pytest.raises(TypeError):
        dataclasses.fields(point)  # pending: nothing is a dataclass yet
    assert [f.name for f in dataclasses.fields(made(point))] == ["x", "tags", "label"]
    assert made(point) is point and made(int) is int


def test_copies_and_pickles_of_an_instance_are_dataclass_instances() -> None:
    c = Citation("memory/2025-11-27.md", 3, 4)
    assert copy.copy(c) == c and copy.deepcopy(c) == c
    assert pickle.loads(pickle.dumps(c)) == c


# A fresh interpreter unpickles instances before making any of their own (a parse worker's
# results reach the parent that way): they must be full dataclass instances.
_UNPICKLE = r"""
import dataclasses, pickle, sys
from gitmem.domain import Citation, Fact
assert "__dataclass_fields__" not in Citation.__dict__
got = pickle.loads(sys.stdin.buffer.read())
assert got == [Citation("a.md", 1, 2), Citation("a.md", 1, 2)], got
assert hash(got[0]) == hash(Citation("a.md", 1, 2))
try:
    got[0].path = "b.md"
except dataclasses.FrozenInstanceError:
    pass
else:
    raise SystemExit("not frozen")
print(repr(got[0]), got[1] is got[0])
"""


def test_an_instance_unpickled_before_any_other_is_made_whole() -> None:
    c = Citation("a.md", 1, 2)
    proc = subprocess.run([sys.executable, "-c", _UNPICKLE], input=pickle.dumps([c, c]),
                          capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().strip() == ("Citation(path='a.md', start_line=1, end_line=2, "
                                            "commit=None) True")


def test_threads_making_one_class_at_once_all_get_instances() -> None:
    point, _ = _classes()
    start = threading.Barrier(8)
    out: list[object] = []

    def make() -> None:
        start.wait()
        out.append(point(7))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [point(7)] * 8


def test_domain_types_are_the_standard_dataclasses_once_made() -> None:
    fact = Fact("f-1", "world", "text", ("peter",), (), None, 1, 1, None, None)
    assert dataclasses.is_dataclass(fact) and fact.entities == ("peter",)
    assert Fact.__dataclass_params__.frozen  # type: ignore[attr-defined]
