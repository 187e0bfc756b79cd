"""``dataclass``: the standard library's, made when the class is first instantiated.

``dataclasses.dataclass`` writes and compiles each class's methods (``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, and for a frozen class ``__setattr__`` and ``__delattr__``) when the
class is defined: about a millisecond a class here, and a command imports some forty it mostly
never instantiates (a lexical recall made 43 and used 22; the parser's, the indexer's, the
embedder's types come with their modules). This decorator defers that work to the class's
first instance: its first ``__init__``, or the first ``__setstate__`` of an instance unpickled
or copied from another process's (a parse worker's results), so every instance is a real
dataclass instance. ``dataclasses`` puts its ``__init__`` in place of the first-use one in one
step, so a thread that instantiates the class meanwhile waits for it in :func:`made`, never
meets it half made (``object.__init__``). The class is the same object all
along; what ``dataclasses`` makes of it is exactly what it would have made at definition
(nothing it reads changes in between: no class here subclasses a dataclass, and the class body
is run once). Only asking the class itself before any instance exists differs:
``dataclasses.fields(cls)`` and ``is_dataclass(cls)`` need :func:`made` first, and a
``default_factory`` field's class attribute is still its ``Field``.

Making a class is mostly compiling the methods' source (three quarters of ~0.6 ms a class),
and that source is the same in every process: the compiled code is kept per interpreter in the
user's cache folder (``dataclass-cpython-311.marshal``, :class:`gitmem.userdirs.InterpreterFile`)
and ``dataclasses`` runs it instead of compiling again.

Type checkers read it as ``dataclasses.dataclass`` (``dataclass_transform``).
"""

from __future__ import annotations

import _thread
import dataclasses
import sys
from collections.abc import Callable
from types import CodeType
from typing import Any, TypeVar, dataclass_transform, overload

from gitmem.userdirs import InterpreterFile

T = TypeVar("T")
_LOCK = _thread.RLock()
_PENDING = "__gitmem_dataclass__"  # in a class's own namespace until it is made: its frozen flag


@overload
def dataclass(cls: type[T], /) -> type[T]: ...


@overload
def dataclass(*, frozen: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def dataclass(cls: type[T] | None = None, /, *,
              frozen: bool = False) -> type[T] | Callable[[type[T]], type[T]]:
    """``@dataclass`` or ``@dataclass(frozen=True)``, made on first use."""

    def wrap(klass: type[T]) -> type[T]:
        for name, value in ((_PENDING, frozen), *_HOOKS):
            setattr(klass, name, value)
        return klass

    return wrap if cls is None else wrap(cls)


def _make_pending(klass: type) -> None:
    for base in reversed(klass.__mro__):
        if _PENDING in base.__dict__:
            made(base)


def _first_init(self: object, *args: Any, **kwargs: Any) -> None:
    """The ``__init__`` of a class not made yet: make it, then initialise as it does."""
    _make_pending(type(self))
    type(self).__init__(self, *args, **kwargs)


def _first_setstate(self: object, state: Any) -> None:
    """Unpickling or copying an instance of a class not made yet (an instance made in another
    process): make the class, then set the state as pickle would."""
    _make_pending(type(self))
    setstate = getattr(self, "__setstate__", None)
    if setstate is not None:
        setstate(state)
    else:
        self.__dict__.update(state)


def made(cls: type[T]) -> type[T]:
    """Make ``cls`` now if it is still pending (a no-op for any other class)."""
    with _LOCK:
        frozen = cls.__dict__.get(_PENDING)
        if frozen is None:
            return cls
        # dataclasses' own names, meanwhile: the builtin exec, and its setter of new methods
        shims: dict[str, Any] = {"exec": _exec_cached}
        if _REAL_SET_NEW_ATTRIBUTE is None:  # another dataclasses: it adds what is not there
            delattr(cls, "__init__")
        else:
            shims["_set_new_attribute"] = _set_new_attribute
        namespace = vars(dataclasses)
        saved = {name: namespace[name] for name in shims if name in namespace}
        namespace.update(shims)
        try:
            dataclasses.dataclass(frozen=frozen)(cls)  # noqa: TID251 (made here, once)
        finally:
            for name in shims:
                namespace.pop(name, None)
            namespace.update(saved)
        for name in (_PENDING, "__setstate__"):  # a caller meanwhile waited in made()
            delattr(cls, name)
        return cls


_REAL_SET_NEW_ATTRIBUTE = getattr(dataclasses, "_set_new_attribute", None)  # (Python 3.11 has it)


def _set_new_attribute(cls: type, name: str, value: Any) -> bool:
    """``dataclasses._set_new_attribute``, which adds a method the class does not define,
    except that the first-use ``__init__`` is replaced by ``dataclasses``' own in one step:
    there is no moment without an ``__init__`` for another thread to find ``object``'s."""
    if name == "__init__" and cls.__dict__.get(name) is _first_init:
        value.__qualname__ = f"{cls.__qualname__}.{value.__name__}"
        setattr(cls, name, value)
        return False
    return bool(_REAL_SET_NEW_ATTRIBUTE(cls, name, value))  # type: ignore[misc]


_HOOKS = (("__init__", _first_init), ("__setstate__", _first_setstate))
_CODE = InterpreterFile("dataclass", (2, sys.flags.optimize))  # methods' source -> code


def _exec_cached(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """``exec`` as ``dataclasses`` calls it, with the methods' source compiled once per
    interpreter: the code object is what ``exec`` would compile (same file name ``<string>``,
    no future flags: ``dont_inherit``), kept in the user's cache folder by its source text."""
    if isinstance(source, str):
        code = _CODE.get(source)
        if not isinstance(code, CodeType):
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if _CODE.usable:
                _CODE.add(source, code)
        source = code
    exec(source, globals, locals)
