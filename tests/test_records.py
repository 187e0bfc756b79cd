"""gitmem.records.dataclass: the standard library's dataclass, made on first use. Its instances
behave as dataclasses.dataclass's do, however the first one comes about."""

from __future__ import annotations

import copy
import dataclasses
import marshal
import os
import pickle
import subprocess
import sys
import threading
from dataclasses import field, replace
from pathlib import Path

import pytest

from gitmem.domain import Citation, Fact
from gitmem.records import dataclass, made
from testing.bounds import FAILURE_SECONDS


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
    assert point.__init__ is not object.__init__
    assert "__setstate__" not in point.__dict__ and "__new__" not in point.__dict__


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


# A child interpreter makes every class of the recall path, with ``compile`` refused when asked
# to (so a method that was not run from the cache file fails loudly), and prints what the
# classes' methods are and do.
_MAKE = r"""
import builtins, json, sys
import gitmem.recall.search, gitmem.recall.answer, gitmem.domain, gitmem.config
from gitmem import records
if sys.argv[1] == "refuse":
    def refuse(*args, **kwargs):
        raise AssertionError("a dataclass method was compiled again")
    records.compile = refuse  # the module's own name for the builtin
elif sys.argv[1] == "plain":
    records._exec_cached = builtins.exec  # dataclasses as they are, no cache
classes = [gitmem.domain.Citation, gitmem.domain.Fact, gitmem.config.Config,
           gitmem.recall.search.Result, gitmem.recall.answer.RecallRequest]
out = []
for cls in classes:
    records.made(cls)
    code = [(name, fn.__qualname__, fn.__code__.co_code.hex(), repr(fn.__code__.co_consts),
             fn.__code__.co_filename,
             sorted(map(str, fn.__annotations__.items())))
            for name, fn in sorted(vars(cls).items())
            if name.startswith("__") and hasattr(fn, "__code__")]
    out.append([cls.__name__, code])
c = gitmem.domain.Citation("a.md", 1, 2)
out.append([repr(c), hash(c) == hash(gitmem.domain.Citation("a.md", 1, 2)), c == c])
print(json.dumps(out))
"""


def _make_classes(mode: str, env: dict[str, str]) -> str:
    proc = subprocess.run([sys.executable, "-c", _MAKE, mode], capture_output=True, text=True,
                          env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_next_process_runs_the_methods_compiled_by_the_first(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    no_cache = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "a-file")}
    (tmp_path / "a-file").write_text("where the cache folder would be", encoding="utf-8")
    fresh = _make_classes("plain", env)  # dataclasses' own exec, nothing kept
    assert _make_classes("compile", no_cache) == fresh  # no cache folder: compiled each time
    assert _make_classes("compile", env) == fresh  # compiled, then written at exit
    assert (tmp_path / "cache" / "gitmem" / f"dataclass-{sys.implementation.cache_tag}.marshal").is_file()
    assert _make_classes("refuse", env) == fresh  # every method from the file, the same code


def test_a_damaged_foreign_or_shared_code_file_is_not_run(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    path = tmp_path / "gitmem" / f"dataclass-{sys.implementation.cache_tag}.marshal"
    fresh = _make_classes("plain", env)
    assert _make_classes("compile", env) == fresh
    good = path.read_bytes()
    for content in (b"not marshal data \x00\xff", marshal.dumps(((1, "another python"), {}))):
        path.write_bytes(content)
        assert _make_classes("compile", env) == fresh
        assert _make_classes("refuse", env) == fresh  # written again at exit
    path.write_bytes(good)
    path.chmod(0o666)  # others may write it: its code is not this user's own any more
    proc = subprocess.run([sys.executable, "-c", _MAKE, "refuse"], capture_output=True,
                          text=True, env=env, check=False)
    assert "compiled again" in proc.stderr


def test_the_code_file_is_user_only_and_used_whatever_the_umask(tmp_path: Path) -> None:
    """Written 0600 under umask 002 too (a group-writable file would not be read back, and
    every process would write it again), and never read through a symbolic link."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    path = tmp_path / "gitmem" / f"dataclass-{sys.implementation.cache_tag}.marshal"
    fresh = _make_classes("plain", env)
    proc = subprocess.run(["sh", "-c", 'umask 002 && exec "$0" -c "$1" compile', sys.executable,
                           _MAKE], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0 and proc.stdout == fresh, proc.stderr
    assert path.stat().st_mode & 0o777 == 0o600
    assert _make_classes("refuse", env) == fresh  # read back: every method from the file
    elsewhere = tmp_path / "elsewhere.marshal"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)
    proc = subprocess.run([sys.executable, "-c", _MAKE, "refuse"], capture_output=True,
                          text=True, env=env, check=False)
    assert "compiled again" in proc.stderr  # the link is not followed
    assert _make_classes("compile", env) == fresh
    assert path.is_file() and not path.is_symlink()  # replaced by a file of its own


def test_a_thread_that_instantiates_a_class_being_made_waits_for_it() -> None:
    """While one thread makes a class (held here inside dataclasses' work), another that
    instantiates it meets the first-use hook still in place and waits, then gets a whole
    instance: it never finds the class half made (``object.__init__``, no arguments)."""
    from gitmem import records

    point, _ = _classes()
    inside, go = threading.Event(), threading.Event()
    real = records._exec_cached

    def held(*args: object) -> None:
        inside.set()
        assert go.wait(FAILURE_SECONDS)
        real(*args)  # type: ignore[arg-type]

    out: list[object] = []
    records._exec_cached = held  # type: ignore[assignment]
    try:
        maker = threading.Thread(target=lambda: out.append(point(1)))
        maker.start()
        assert inside.wait(FAILURE_SECONDS)
        records._exec_cached = real  # the second thread's own work is not held
        other = threading.Thread(target=lambda: out.append(point(2)))
        other.start()
        other.join(1.0)  # it may now run into the class being made (it must not fail)
        go.set()
        maker.join()
        other.join()
    finally:
        records._exec_cached = real
        go.set()
    assert sorted(out, key=repr) == [point(1), point(2)]


def test_bases_are_made_first() -> None:
    @dataclass(frozen=True)
    class Base:
        x: int

    @dataclass(frozen=True)
    class Child(Base):
        y: int = 0

    assert _pending(Base) and _pending(Child)
    assert Child(1, 2) == Child(1, 2) and Base(1) != Child(1)
    assert not _pending(Base) and [f.name for f in dataclasses.fields(Child)] == ["x", "y"]
