"""Plain records: classes with `__slots__` and a written-out `__init__`, compared, shown and
copied by their fields. They stand in for dataclasses, whose decorator writes and compiles each
class's methods when the module is imported (about half a millisecond a class, some fifty of
them on the way to linting one Dockerfile).

A subclass lists its fields in `__slots__`, in the order `__init__` takes them; a slot named in
`_memo` (the last ones) is a value worked out later and kept (not compared, not shown, not copied). `Frozen`
records are hashable and refuse assignment, as frozen dataclasses do; their `__init__` sets the
fields with `freeze`.
"""

from __future__ import annotations


class Record:
    __slots__ = ()
    _memo: tuple[str, ...] = ()
    _unshown: tuple[str, ...] = ()  # fields left out of repr (one that holds the record itself)
    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls) -> None:
        cls._fields = tuple(name for name in cls.__slots__ if name not in cls._memo)

    def _values(self) -> tuple:
        return tuple([getattr(self, name) for name in self._fields])

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields if name not in self._unshown)
        return f"{type(self).__qualname__}({shown})"

    def __reduce__(self):  # pickled for worker processes: rebuilt through __init__
        return type(self), self._values()


class Frozen(Record):
    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r} of a {type(self).__name__}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r} of a {type(self).__name__}")


_set = object.__setattr__


def freeze(record: Frozen, *values) -> None:
    """Set a frozen record's fields, in `__slots__` order, from its `__init__`."""
    for name, value in zip(record.__slots__, values):
        _set(record, name, value)


def memo(record: Record, name: str, value):
    """Keep a worked-out value in a record's `_memo` slot (frozen ones too); return it."""
    _set(record, name, value)
    return value


def replace(record: Record, **changes) -> Record:
    """A copy of `record` with some fields changed, as `dataclasses.replace` makes."""
    values = dict(zip(record._fields, record._values()))
    values.update(changes)
    return type(record)(**values)
