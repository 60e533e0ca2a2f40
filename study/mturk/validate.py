"""Check an MTurk request against botocore's own service model before it is sent.

botocore validates only types, required members and minimums on the client side; it happily
sends a Reward of "0.001", MaxResults=500 or AssignmentStatuses=["submitted"], which the service
then refuses. Here every rule of the model is checked (type, required, min, max, pattern, enum)
plus the limits the model states only in its documentation text (DOCUMENTED_LIMITS). The same
checks run in the local emulator (study.mturk.emulator), which answers as the service would.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import cache

import botocore.session
from botocore.model import Shape

# What a pattern means, for people reading an error.
PATTERN_HINTS = {
    "CurrencyAmount": 'a US dollar amount with at most two decimals, such as "2.50"',
    "CustomerId": 'a worker id: "A" followed by capital letters and digits',
    "EntityId": "an MTurk id: capital letters and digits only",
}


@cache
def service_model():
    return botocore.session.get_session().get_service_model("mturk")


@dataclass(frozen=True)
class Problem:
    """One rule a request breaks. `path` names the parameter as the caller wrote it."""

    path: str
    rule: str  # required | unknown | type | min | max | pattern | enum | documented
    text: str
    value: object = None
    constraint: object = None

    def __str__(self) -> str:
        return f"{self.path or 'request'}: {self.text}"

    def service_message(self) -> str:
        """The wording AWS services use for constraint failures (the emulator answers with it)."""
        where = _camel(self.path)
        if self.rule == "max" and isinstance(self.value, int):
            rule = f"Member must have value less than or equal to {self.constraint}"
        elif self.rule == "min" and isinstance(self.value, int):
            rule = f"Member must have value greater than or equal to {self.constraint}"
        elif self.rule == "max":
            rule = f"Member must have length less than or equal to {self.constraint}"
        elif self.rule == "min":
            rule = f"Member must have length greater than or equal to {self.constraint}"
        elif self.rule == "pattern":
            rule = f"Member must satisfy regular expression pattern: {self.constraint}"
        elif self.rule == "enum":
            rule = f"Member must satisfy enum value set: [{', '.join(self.constraint)}]"
        elif self.rule == "required":
            return f"Value null at '{where}' failed to satisfy constraint: Member must not be null"
        else:
            return str(self)
        return f"Value '{_short(self.value)}' at '{where}' failed to satisfy constraint: {rule}"


class InvalidRequest(ValueError):
    """A request that MTurk would refuse; it was not sent."""

    def __init__(self, operation: str, problems: list[Problem]) -> None:
        self.operation = operation
        self.problems = problems
        lines = "\n".join(f"  - {problem}" for problem in problems)
        super().__init__(
            f"MTurk would refuse this {operation} request, so it was not sent:\n{lines}"
        )

    def __reduce__(self):
        # Unpickling (a worker process's exception) calls the class with these arguments.
        return type(self), (self.operation, self.problems)


def check(operation: str, params: dict) -> None:
    """Raise InvalidRequest listing every broken rule, or return quietly."""
    found = problems(operation, params)
    if found:
        raise InvalidRequest(operation, found)


def problems(operation: str, params: dict) -> list[Problem]:
    model = service_model()
    if operation not in model.operation_names:
        return [Problem("", "unknown", f"{operation} is not an MTurk operation")]
    shape = model.operation_model(operation).input_shape
    found: list[Problem] = []
    if shape is None:
        if params:
            found.append(Problem("", "unknown", f"{operation} takes no parameters"))
        return found
    _check(shape, params, "", found)
    found.extend(_documented(operation, params))
    return found


# -- the model's rules ------------------------------------------------------------------------


def _check(shape: Shape, value, path: str, found: list[Problem]) -> None:
    kind = shape.type_name
    if kind == "structure":
        if not isinstance(value, dict):
            found.append(Problem(path, "type", f"expected an object, got {_type(value)}", value))
            return
        for name in shape.required_members:
            if value.get(name) is None:
                found.append(Problem(_join(path, name), "required", "is required but missing"))
        for name, item in value.items():
            if name not in shape.members:
                allowed = ", ".join(shape.members)
                found.append(
                    Problem(_join(path, name), "unknown", f"unknown parameter (allowed: {allowed})")
                )
            elif item is not None:
                _check(shape.members[name], item, _join(path, name), found)
    elif kind == "list":
        if not isinstance(value, (list, tuple)):
            found.append(Problem(path, "type", f"expected a list, got {_type(value)}", value))
            return
        _bounds(shape, len(value), value, path, found, "items")
        for index, item in enumerate(value):
            _check(shape.member, item, f"{path}[{index}]", found)
    elif kind == "map":
        if not isinstance(value, dict):
            found.append(Problem(path, "type", f"expected an object, got {_type(value)}", value))
            return
        for key, item in value.items():
            _check(shape.value, item, f"{path}.{key}", found)
    elif kind == "string":
        if not isinstance(value, str):
            found.append(Problem(path, "type", f"expected text, got {_type(value)}", value))
            return
        _bounds(shape, len(value), value, path, found, "characters")
        pattern = shape.metadata.get("pattern")
        if pattern and not re.search(pattern, value):
            hint = PATTERN_HINTS.get(shape.name, f"text matching {pattern}")
            found.append(
                Problem(
                    path, "pattern", f"{value!r} is not {hint} (pattern {pattern})", value, pattern
                )
            )
        enum = shape.metadata.get("enum")
        if enum and value not in enum:
            found.append(
                Problem(path, "enum", f"{value!r} is not one of {', '.join(enum)}", value, enum)
            )
    elif kind in ("integer", "long"):
        if isinstance(value, bool) or not isinstance(value, int):
            found.append(
                Problem(path, "type", f"expected a whole number, got {_type(value)}", value)
            )
            return
        _bounds(shape, value, value, path, found, None)
    elif kind in ("float", "double"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            found.append(Problem(path, "type", f"expected a number, got {_type(value)}", value))
    elif kind == "boolean":
        if not isinstance(value, bool):
            found.append(
                Problem(path, "type", f"expected true or false, got {_type(value)}", value)
            )
    elif kind == "timestamp":
        # Callers pass datetimes; on the wire the JSON protocol sends epoch seconds.
        if isinstance(value, bool) or not isinstance(value, (dt.datetime, int, float, str)):
            found.append(
                Problem(path, "type", f"expected a date and time, got {_type(value)}", value)
            )


def _bounds(
    shape: Shape, size: int, value, path: str, found: list[Problem], unit: str | None
) -> None:
    low, high = shape.metadata.get("min"), shape.metadata.get("max")
    what = f"{size} {unit}" if unit else str(size)
    if low is not None and size < low:
        need = f"at least {low} {unit}" if unit else f"the minimum {low}"
        found.append(Problem(path, "min", f"{what} is less than {need}", value, low))
    if high is not None and size > high:
        need = f"at most {high} {unit}" if unit else f"the maximum {high}"
        found.append(Problem(path, "max", f"{what} is more than {need}", value, high))


# -- limits the model states only in prose ----------------------------------------------------

# (operation, parameter) -> (limit, unit). Sources: the model's documentation of each member.
DOCUMENTED_LIMITS = {
    ("CreateHIT", "Question"): (65535, "bytes"),
    ("CreateHITWithHITType", "Question"): (65535, "bytes"),
    ("CreateQualificationType", "Test"): (65535, "bytes"),
    ("CreateQualificationType", "AnswerKey"): (65535, "bytes"),
    ("UpdateQualificationType", "Test"): (65535, "bytes"),
    ("UpdateQualificationType", "AnswerKey"): (65535, "bytes"),
    ("CreateHIT", "QualificationRequirements"): (10, "requirements"),
    ("CreateHITType", "QualificationRequirements"): (10, "requirements"),
    ("NotifyWorkers", "Subject"): (200, "characters"),
    ("NotifyWorkers", "MessageText"): (4096, "characters"),
    ("NotifyWorkers", "WorkerIds"): (100, "workers"),
}
LOCALE_COMPARATORS = ("EqualTo", "NotEqualTo", "In", "NotIn")


def _documented(operation: str, params: dict) -> list[Problem]:
    found = []
    for (op, name), (limit, unit) in DOCUMENTED_LIMITS.items():
        value = params.get(name)
        if op != operation or value is None:
            continue
        size = (
            len(value.encode("utf-8")) if unit == "bytes" and isinstance(value, str) else len(value)
        )
        if size > limit:
            found.append(
                Problem(
                    name,
                    "documented",
                    f"{size} {unit} is more than MTurk allows ({limit})",
                    value,
                    limit,
                )
            )
    if operation == "NotifyWorkers" and params.get("WorkerIds") == []:
        found.append(Problem("WorkerIds", "documented", "name at least one worker"))
    if operation == "CreateHIT" and not params.get("Question") and not params.get("HITLayoutId"):
        found.append(
            Problem("Question", "documented", "either Question or HITLayoutId must be given")
        )
    for index, requirement in enumerate(params.get("QualificationRequirements") or []):
        if isinstance(requirement, dict):
            found.extend(_requirement(requirement, f"QualificationRequirements[{index}]"))
    return found


def _requirement(requirement: dict, path: str) -> list[Problem]:
    comparator = requirement.get("Comparator")
    integers = requirement.get("IntegerValues") or []
    locales = requirement.get("LocaleValues") or []
    found = []
    if comparator in ("Exists", "DoesNotExist") and (integers or locales):
        found.append(
            Problem(f"{path}.IntegerValues", "documented", f"must be absent with {comparator}")
        )
    if comparator in ("In", "NotIn") and len(integers) > 15:
        found.append(
            Problem(f"{path}.IntegerValues", "documented", "at most 15 values with In/NotIn")
        )
    if locales and comparator not in LOCALE_COMPARATORS:
        found.append(
            Problem(
                f"{path}.LocaleValues",
                "documented",
                f"locales work only with {', '.join(LOCALE_COMPARATORS)}",
            )
        )
    if comparator in ("EqualTo", "NotEqualTo") and len(locales) > 1:
        found.append(
            Problem(f"{path}.LocaleValues", "documented", f"only one locale with {comparator}")
        )
    return found


# -- helpers ----------------------------------------------------------------------------------


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _type(value) -> str:
    return {
        bool: "true/false",
        int: "a number",
        float: "a number",
        str: "text",
        list: "a list",
        dict: "an object",
        type(None): "nothing",
    }.get(type(value), type(value).__name__)


def _camel(path: str) -> str:
    return ".".join(part[:1].lower() + part[1:] for part in path.split("."))


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."
