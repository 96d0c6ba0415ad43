"""Regular expressions compiled when first used: a run over one Dockerfile then pays only for
the patterns the rules it runs need, not for the few hundred every module defines."""

from __future__ import annotations

import re

_BOUND = ("search", "match", "fullmatch", "finditer", "findall", "sub", "split")


class Lazy:
    """A pattern that compiles itself on first use and then behaves like the compiled one."""

    __slots__ = ("_args", "_compiled", *_BOUND)

    def __init__(self, pattern: str, flags: int = 0):
        self._args = (pattern, flags)
        self._compiled: re.Pattern | None = None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return self._compiled

    def __getattr__(self, name: str):  # search, match, finditer, sub, pattern ...
        # only called for a name not found on the instance; the common methods are then
        # bound on the instance, so later calls cost what the compiled pattern's do
        compiled = self.compiled()
        value = getattr(compiled, name)
        if name in _BOUND:
            object.__setattr__(self, name, value)
        return value


def lazy(pattern: str, flags: int = 0) -> Lazy:
    return Lazy(pattern, flags)


# -- the literal sieve -------------------------------------------------------------------
#
# Most patterns the rules run over every instruction or every file need some literal text to
# match at all (`nvidia-driver`, `device-plugin`, `torch.compile` ...). Looking for those
# literals with `in` costs a fraction of running the pattern, and most texts hold none of
# them, so `may_match` tells first whether the pattern can match: never False where it does.

try:
    from re import _parser as _sre
except ImportError:  # Python 3.10
    import sre_parse as _sre  # type: ignore[no-redef]

# what a pattern needs: None (nothing known), or groups of literals: every match holds one
# literal of each group, each literal with whether it matches in any case (then looked for
# in the lowered text)
Needs = "tuple[tuple[tuple[str, bool], ...], ...] | None"
_NEEDS: dict = {}
_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", _sre.MAX_REPEAT)}
_ATOMIC = getattr(_sre, "ATOMIC_GROUP", None)
# the groups of a whole pattern that are looked for, the ones of the longest literals first
_GROUPS = 2


def _weight(group) -> int:
    """How much a group sieves: the length of its shortest literal (0 for none)."""
    return min(len(literal) for literal, _ in group) if group else 0


def _sequence(items, folded: bool):
    """The best group of a sequence of parsed items (see `_groups`)."""
    groups = _groups(items, folded)
    return max(groups, key=_weight) if groups else None


def _groups(items, folded: bool) -> list:
    """Groups of literals a sequence of parsed items needs, each a tuple of alternatives:
    every match holds the text of each run of plain literals, and one of the literals each
    group, branch or repeated item needs."""
    out, run = [], []

    def close():
        if run:
            out.append((("".join(run), folded),))
            run.clear()

    for op, arg in items:
        if op is _sre.LITERAL and (not folded or arg < 128):
            run.append(_char(arg, folded))
            continue
        if run and op is _sre.BRANCH:  # `lib(?:cuda|nvidia-ml)`: the run goes on into each alternative
            leads = [_lead(alternative, folded) for alternative in arg[1]]
            if all(leads):  # which says all the run and the branch's own group say
                out.append(tuple(dict.fromkeys(("".join(run) + lead, folded) for lead in leads)))
                run.clear()
                continue
        close()
        need = _item(op, arg, folded)
        if need:
            out.append(need)
    close()
    return out


def _char(code: int, folded: bool) -> str:
    return chr(code).lower() if folded else chr(code)


def _lead(items, folded: bool) -> str:
    """The plain literals a sequence starts with."""
    out = []
    for op, arg in items:
        if op is not _sre.LITERAL or (folded and arg >= 128):
            break
        out.append(_char(arg, folded))
    return "".join(out)


def _item(op, arg, folded: bool):
    if op is _sre.SUBPATTERN:
        _group, add, remove, body = arg
        if (add | remove) & ~(re.IGNORECASE | re.VERBOSE | re.DOTALL | re.MULTILINE):
            return None  # ASCII / LOCALE / UNICODE change what matches in ways not followed here
        if add & re.IGNORECASE:
            folded = True
        if remove & re.IGNORECASE:
            folded = False
        return _sequence(body, folded)
    if op is _sre.BRANCH:
        found = []
        for alternative in arg[1]:
            need = _sequence(alternative, folded)
            if not need:
                return None  # this alternative may match without any literal
            found.extend(need)
        return tuple(dict.fromkeys(found))
    if op in _REPEATS:
        low, _high, body = arg
        return _sequence(body, folded) if low >= 1 else None
    if _ATOMIC is not None and op is _ATOMIC:
        return _sequence(arg, folded)
    return None  # a class, an anchor, a lookaround, a backreference: nothing known


def needs(pattern) -> Needs:
    """The groups of literals every match of `pattern` (compiled, or a `lazy` one) holds one
    literal of each of. A lazy pattern is read from its text, not compiled: where the text
    lacks its literals, it never is."""
    key = pattern._args if isinstance(pattern, Lazy) else pattern
    try:
        return _NEEDS[key]
    except KeyError:
        pass
    text, flags = key if isinstance(pattern, Lazy) else (pattern.pattern, pattern.flags)
    found = _NEEDS[key] = _analysed(text, flags)
    return found


def _analysed(text, flags: int) -> Needs:
    if not isinstance(text, str):
        return None
    try:
        parsed = _sre.parse(text, flags)
        flags = parsed.state.flags  # with the pattern's own `(?i)`
        if flags & (re.LOCALE | re.ASCII):
            return None
        groups = _groups(parsed, bool(flags & re.IGNORECASE))
        return tuple(sorted(groups, key=_weight, reverse=True)[:_GROUPS]) or None
    except Exception:  # a parser this code does not know: no sieve
        return None


def may_match(pattern, text: str) -> bool:
    """False only where `pattern` (compiled, or a `lazy` one) cannot match anywhere in `text`:
    the text lacks every literal of a group that each match needs one of."""
    found = _NEEDS.get(pattern._args if isinstance(pattern, Lazy) else pattern, False)
    if found is False:
        found = needs(pattern)
    if not found:
        return True
    lowered = None
    for group in found:
        for literal, folded in group:
            if folded:
                if lowered is None:
                    if not text.isascii():
                        return True  # case folding beyond ASCII is not followed here
                    lowered = text.lower()
                if literal in lowered:
                    break
            elif literal in text:
                break
        else:
            return False
    return True
