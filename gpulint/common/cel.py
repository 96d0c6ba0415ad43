"""The CEL rules of a CRD's `x-kubernetes-validations`, run on a value as the API server runs
them, for the part of CEL the bundled CRDs' rules are written in: `self` and its fields,
`has()`, `size()`, `!`, `&&`, `||`, comparisons, `? :`, and bool, int, string and null literals.

A rule written in more of CEL than that is not run (`support` says "unsupported"), and a rule
that reads `oldSelf` (a transition rule, such as `self == oldSelf` for a field that may not
change) runs only when an object is updated, against the object stored before: one file holds
no such object, so it is not run either (`support` says "transition")."""

from __future__ import annotations

import functools
import re

_TOKEN = re.compile(r"\s*(?:(\d+)|\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'|([A-Za-z_][A-Za-z0-9_]*)"
                    r"|(&&|\|\||==|!=|<=|>=|[!?:().<>-]))")
_COMPARE = ("==", "!=", "<", "<=", ">", ">=")
_MISSING = object()  # a field the value does not have


class Unsupported(Exception):
    """An expression outside the part of CEL gpulint runs."""


class _Error(Exception):
    """An evaluation error (a missing field read without `has()`, a type mismatch): the API
    server reports the rule as failing with its own error words, which gpulint does not guess."""


def _tokens(rule: str) -> list[tuple[str, object]]:
    out, pos = [], 0
    while pos < len(rule.rstrip()):
        match = _TOKEN.match(rule, pos)
        if match is None:
            raise Unsupported(f"unexpected text at {rule[pos:pos + 10]!r}")
        number, double, single, name, symbol = match.groups()
        if number is not None:
            out.append(("value", int(number)))
        elif double is not None or single is not None:
            text = double if double is not None else single
            if "\\" in text:
                raise Unsupported("escapes in a string")
            out.append(("value", text))
        elif name is not None:
            literal = {"true": True, "false": False, "null": None}
            out.append(("value", literal[name]) if name in literal else ("name", name))
        else:
            out.append(("op", symbol))
        pos = match.end()
    return out


class _Parser:
    """Recursive descent by CEL's precedence: `? :`, `||`, `&&`, comparisons, `!`/`-`,
    field selection and calls. Each rule compiles to a function of the value (`self`)."""

    def __init__(self, rule: str) -> None:
        self.tokens = _tokens(rule)
        self.at = 0
        self.transition = False

    def peek(self, *ops: str) -> bool:
        return self.at < len(self.tokens) and self.tokens[self.at] in {("op", op) for op in ops}

    def take(self, op: str) -> None:
        if not self.peek(op):
            raise Unsupported(f"expected {op!r}")
        self.at += 1

    def whole(self):
        expr = self.ternary()
        if self.at != len(self.tokens):
            raise Unsupported("text after the expression")
        return expr

    def ternary(self):
        test = self.either()
        if not self.peek("?"):
            return test
        self.take("?")
        then = self.ternary()
        self.take(":")
        other = self.ternary()
        return lambda s: then(s) if _bool(test(s)) else other(s)

    def either(self):
        return self.chain("||", self.both, lambda a, b, s: _bool(a(s)) or _bool(b(s)))

    def both(self):
        return self.chain("&&", self.compare, lambda a, b, s: _bool(a(s)) and _bool(b(s)))

    def chain(self, op: str, operand, combine):
        """`operand (op operand)*`, left to right."""
        left = operand()
        while self.peek(op):
            self.take(op)
            left = functools.partial(combine, left, operand())
        return left

    def compare(self):
        left = self.unary()
        if self.peek(*_COMPARE):
            op = self.tokens[self.at][1]
            self.at += 1
            return functools.partial(_compared, op, left, self.unary())
        return left

    def unary(self):
        if self.peek("!"):
            self.take("!")
            operand = self.unary()
            return lambda s: not _bool(operand(s))
        if self.peek("-"):
            self.take("-")
            operand = self.unary()
            return lambda s: -_int(operand(s))
        return self.member()

    def member(self):
        return self.selection()[0]

    def selection(self):
        """The expression, and (the object, the field) when it ends in a field selection."""
        expr, selected = self.primary(), None
        while self.peek("."):
            self.take(".")
            kind, name = self.tokens[self.at] if self.at < len(self.tokens) else ("", "")
            if kind != "name":
                raise Unsupported("a selection of no field")
            self.at += 1
            if self.peek("("):
                raise Unsupported("a method call")
            expr, selected = functools.partial(_select, expr, name), (expr, name)
        return expr, selected

    def primary(self):
        if self.at >= len(self.tokens):
            raise Unsupported("the expression ends early")
        kind, value = self.tokens[self.at]
        self.at += 1
        if kind == "value":
            return lambda s: value
        if (kind, value) == ("op", "("):
            expr = self.ternary()
            self.take(")")
            return expr
        if kind != "name":
            raise Unsupported(f"unexpected {value!r}")
        if value in ("self", "oldSelf"):
            # oldSelf is the stored object's value, read only on update
            self.transition = self.transition or value == "oldSelf"
            return lambda s: s
        if value in ("has", "size") and self.peek("("):
            self.take("(")
            argument, selected = self.selection()
            self.take(")")
            if value == "size":
                return functools.partial(_size, argument)
            if selected is None:  # has() asks whether a field is set: it takes a selection
                raise Unsupported("has() of no field selection")
            return functools.partial(_has, *selected)
        raise Unsupported(f"the name {value!r}")


def _bool(value) -> bool:
    if type(value) is not bool:
        raise _Error("no bool")
    return value


def _int(value) -> int:
    if type(value) is not int:
        raise _Error("no int")
    return value


def _select(expr, name: str, s):
    owner = expr(s)
    if not isinstance(owner, dict) or name not in owner:
        raise _Error(f"no such key: {name}")
    return owner[name]


def _has(expr, name: str, s) -> bool:
    owner = expr(s)
    if not isinstance(owner, dict):
        raise _Error("has() on no object")
    return name in owner


def _size(expr, s) -> int:
    value = expr(s)
    if not isinstance(value, (str, list, dict)):
        raise _Error("size() of no string, list or map")
    return len(value)


def _compared(op: str, left, right, s) -> bool:
    a, b = left(s), right(s)
    if op in ("==", "!="):
        return (a == b and type(a) is type(b)) == (op == "==")
    if type(a) is not type(b) or not isinstance(a, (int, str)) or isinstance(a, bool):
        raise _Error("no ordering")
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


@functools.lru_cache(maxsize=64)
def _compiled(rule: str):
    parser = _Parser(rule)
    expr = parser.whole()
    return expr, parser.transition


def support(rule: str) -> str:
    """"judged", "transition" (reads `oldSelf`) or "unsupported"."""
    try:
        _, transition = _compiled(rule)
    except Unsupported:
        return "unsupported"
    return "transition" if transition else "judged"


def holds(rule: str, value) -> bool | None:
    """Whether the value passes the rule when an object is created; None where gpulint does
    not run the rule (see `support`) or the rule fails with an evaluation error."""
    if support(rule) != "judged":
        return None
    expr, _ = _compiled(rule)
    try:
        return _bool(expr(value))
    except _Error:
        return None
