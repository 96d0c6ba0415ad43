"""Whether a `mig-devices` key is written as mig-parted reads a MIG profile name
(go-nvlib's parseMigProfile, which AssertValidFormat runs while the file is decoded): the error
it gives, word for word, or None."""

from __future__ import annotations

import re


def format_error(profile: str) -> str | None:
    if profile == "":
        return "profile is the empty string"
    plus, minus = profile.split("+", 1), profile.split("-", 1)
    if len(plus) == 2 and len(minus) == 2:
        return f"profile '{profile}' contains both '+/-' attributes"
    split = plus if len(plus) == 2 else minus
    error = _fields_error(split[0])
    if error is not None:
        return f"cannot parse fields of '{profile}': {error}"
    if len(split) == 2:
        error = _attributes_error(split[1])
        if error is not None:
            return f"cannot parse attributes of '{profile}': {error}"
    return None


def _field_error(text: str, field: str) -> str | None:
    if text.strip() != text:
        return f"leading or trailing spaces on '%d{field}'"
    if not text.endswith(field):
        return f"missing '{field}' from '%d{field}'"
    number = text[:-len(field)]
    # strconv.Atoi: an optional sign and decimal digits
    if re.fullmatch(r"[+-]?[0-9]+", number) is None:
        return f"malformed number in '%d{field}'"
    return None


def _fields_error(text: str) -> str | None:
    parts = text.split(".", 2)
    if len(parts) == 3:
        fields = zip(parts, ("c", "g", "gb"))
    elif len(parts) == 2:
        fields = zip(parts, ("g", "gb"))
    else:
        return "parsed wrong number of fields, expected 2 or 3"
    return next((e for e in (_field_error(p, f) for p, f in fields) if e is not None), None)


def _attributes_error(text: str) -> str | None:
    attributes = text.split(",")
    seen: set[str] = set()
    for attribute in attributes:
        # in the order go-nvlib tests them, each attribute in turn
        if attribute in seen:
            return "non unique attribute in list"
        if attribute == "":
            return "empty attribute in list"
        if attribute.strip() != attribute:
            return "leading or trailing spaces in attribute"
        if attribute[0].isdigit():
            return "attribute begins with a number"
        if attribute[0] == "." or attribute[-1] == ".":
            return "attribute begins/ends with a dot"
        if re.fullmatch(r"[A-Za-z0-9.]+", attribute) is None:
            return "non alpha-numeric character or digit in attribute"
        seen.add(attribute)
    return None
