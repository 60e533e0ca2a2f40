"""Compile a JSON Schema into one fast Python predicate (used by `study.curation.schema`).

jsonschema checks a CoAuthor record in about 0.4 ms; 2.7 million events would take about 20
minutes. The compiler here turns the keywords the `schemas/coauthor-*.schema.json` files use
into straight-line Python (about 2.5 us per record), so the schemas stay the single source of
truth while validation keeps pace with parsing.

The predicate is sound but may be conservative: True means valid; False (and any exception
inside it) means "ask jsonschema", which then decides and words the errors. A schema using a
keyword outside `_HANDLED` raises `Unsupported`, and the caller falls back to jsonschema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping


class Unsupported(Exception):
    """The schema uses a keyword the compiler does not handle."""


_IGNORED = {"$schema", "$id", "$defs", "title", "description", "$comment", "examples"}
_TYPE_TESTS = {
    "string": "type({v}) is str",
    "integer": "type({v}) is int",  # 3.0 is an integer to JSON Schema: jsonschema decides that
    "number": "type({v}) in (int, float)",
    "object": "type({v}) is dict",
    "array": "type({v}) is list",
    "null": "{v} is None",
    "boolean": "type({v}) is bool",
}


class _Compiler:
    """Turns a schema into straight-line Python: one `return False` per broken rule.

    Subschemas are inlined (a `$ref` too, unless it recurses), values are bound to locals
    once, `oneOf` branches with disjoint types become an if/elif on the type, and a check
    whose type is already known skips its type guard. Anything the generated code cannot
    decide (an exception, a float that JSON Schema counts as an integer) yields False, which
    sends the record to jsonschema.
    """

    def __init__(self) -> None:
        self.constants: dict[str, object] = {}
        self.functions: list[str] = []
        self.names: dict[int, str] = {}
        self._inlining: set[int] = set()
        self._locals = 0
        self._keep: list[object] = []  # keeps subschemas alive so their id() stays unique

    def constant(self, value: object) -> str:
        name = f"_c{len(self.constants)}"
        self.constants[name] = value
        return name

    def local(self) -> str:
        self._locals += 1
        return f"x{self._locals}"

    def function(self, schema: Mapping, resolver) -> str:
        """A named helper for a subschema, compiled once."""
        key = id(schema)
        if key not in self.names:
            self._keep.append(schema)
            name = f"_f{len(self.names)}"
            self.names[key] = name
            self._inlining.add(key)
            body = self.lines(schema, "v", resolver, None)
            self._inlining.discard(key)
            code = "\n".join("        " + line for line in body) or "        pass"
            self.functions.append(
                f"def {name}(v):\n    try:\n{code}\n"
                "    except (TypeError, KeyError, AttributeError):\n        return False\n"
                "    return True\n"
            )
        return self.names[key]

    def types(self, schema: Mapping | bool, resolver) -> set[str] | None:
        """The JSON types a subschema can accept, when plain to see; None when unknown."""
        if not isinstance(schema, Mapping):
            return None
        if "type" in schema:
            found = set(schema["type"]) if isinstance(schema["type"], list) else {schema["type"]}
            return found | {"integer"} if "number" in found else found
        if "const" in schema and isinstance(schema["const"], str):
            return {"string"}
        if "$ref" in schema:
            resolved = resolver.lookup(schema["$ref"])
            return self.types(resolved.contents, resolved.resolver)
        return None

    def lines(self, schema: Mapping | bool, x: str, resolver, known: str | None) -> list[str]:
        if schema is True or schema == {}:
            return []
        if schema is False:
            return ["return False"]
        unknown = set(schema) - _IGNORED - _HANDLED
        if unknown:
            raise Unsupported(sorted(unknown))
        out: list[str] = []
        if "$ref" in schema:
            resolved = resolver.lookup(schema["$ref"])
            if id(resolved.contents) in self._inlining:  # a recursive schema: call, don't inline
                helper = self.function(resolved.contents, resolved.resolver)
                out.append(f"if not {helper}({x}): return False")
            else:
                self._inlining.add(id(resolved.contents))
                self._keep.append(resolved.contents)
                out += self.lines(resolved.contents, x, resolved.resolver, known)
                self._inlining.discard(id(resolved.contents))
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not (len(types) == 1 and types[0] == known):  # a dispatch branch checked it
                test = " or ".join(_TYPE_TESTS[t].format(v=x) for t in types)
                out.append(f"if not ({test}): return False")
            known = types[0] if len(types) == 1 else known
        if "const" in schema:
            if not isinstance(schema["const"], str):
                raise Unsupported(["const"])
            out.append(f"if {x} != {self.constant(schema['const'])}: return False")
        if "enum" in schema:
            if not all(isinstance(value, str) for value in schema["enum"]):
                raise Unsupported(["enum"])
            # Only strings can be members; an unhashable value raises, which means "ask jsonschema".
            out.append(f"if {x} not in {self.constant(frozenset(schema['enum']))}: return False")
        number = "" if known in ("integer", "number") else f"type({x}) in (int, float) and "
        for keyword, broken in (("minimum", "<"), ("maximum", ">")):
            if keyword in schema:
                out.append(f"if {number}{x} {broken} {schema[keyword]!r}: return False")
        text = "" if known == "string" else f"type({x}) is str and "
        for keyword, broken in (("minLength", "<"), ("maxLength", ">")):
            if keyword in schema:
                out.append(f"if {text}len({x}) {broken} {int(schema[keyword])}: return False")
        if "pattern" in schema:  # JSON Schema's pattern is a search, not a full match
            pattern = self.constant(re.compile(schema["pattern"]))
            out.append(f"if {text}{pattern}.search({x}) is None: return False")
        out += self._guarded("dict", known == "object", x, self._object(schema, x, resolver))
        out += self._guarded("list", known == "array", x, self._array(schema, x, resolver))
        for keyword in ("oneOf", "anyOf"):
            if keyword in schema:
                out += self._alternatives(keyword, schema[keyword], x, resolver, known)
        for sub in schema.get("allOf", ()):
            out += self.lines(sub, x, resolver, known)
        return out

    @staticmethod
    def _guarded(python_type: str, known: bool, x: str, body: list[str]) -> list[str]:
        if not body or known:
            return body
        return [f"if type({x}) is {python_type}:"] + ["    " + line for line in body]

    def _object(self, schema: Mapping, x: str, resolver) -> list[str]:
        out: list[str] = []
        properties = schema.get("properties", {})
        required = list(schema.get("required", ()))
        closed = "additionalProperties" in schema
        if closed and schema["additionalProperties"] is not False:
            raise Unsupported(["additionalProperties"])
        bodies = {}  # the checks of each property that has some
        for key, sub in properties.items():
            y = self.local()
            body = self.lines(sub, y, resolver, None)
            if body:
                bodies[key] = (y, body)
        if closed and set(required) == set(properties):  # these keys and no others
            # Each key is read below, and a missing one raises KeyError (False), so with every
            # key read the count is the whole test: comparing the key sets cost a record of the
            # release about 0.7 us, a twentieth of its one pass (docs/benchmarks.md).
            out.append(f"if len({x}) != {len(properties)}: return False")
            if len(bodies) < len(properties):
                keys = self.constant(frozenset(properties))
                out.append(f"if not {keys}.issuperset({x}): return False")
        else:
            if required:
                out.append(
                    f"if not {x}.keys() >= {self.constant(frozenset(required))}: return False"
                )
            if closed:
                out.append(
                    f"if not {self.constant(frozenset(properties))}.issuperset({x}): return False"
                )
        if "minProperties" in schema:
            out.append(f"if len({x}) < {int(schema['minProperties'])}: return False")
        if "maxProperties" in schema:
            out.append(f"if len({x}) > {int(schema['maxProperties'])}: return False")
        for key, (y, body) in bodies.items():
            if key in required:  # presence was checked above, or reading it checks it
                out += [f"{y} = {x}[{key!r}]"] + body
            else:
                out += [f"if {key!r} in {x}:", f"    {y} = {x}[{key!r}]"]
                out += ["    " + line for line in body]
        return out

    def _array(self, schema: Mapping, x: str, resolver) -> list[str]:
        out: list[str] = []
        if "minItems" in schema:
            out.append(f"if len({x}) < {int(schema['minItems'])}: return False")
        if "maxItems" in schema:
            out.append(f"if len({x}) > {int(schema['maxItems'])}: return False")
        if "items" in schema:
            y = self.local()
            body = self.lines(schema["items"], y, resolver, None)
            if body:
                out += [f"for {y} in {x}:"] + ["    " + line for line in body]
        return out

    def _alternatives(self, keyword: str, branches, x: str, resolver, known) -> list[str]:
        kinds = [self.types(sub, resolver) for sub in branches]
        if all(kinds) and sum(map(len, kinds)) == len(set().union(*kinds)):
            # Disjoint types: at most one branch can match, so dispatch on the type.
            out: list[str] = []
            for number, (sub, kind) in enumerate(zip(branches, kinds, strict=True)):
                test = " or ".join(_TYPE_TESTS[t].format(v=x) for t in sorted(kind))
                single = next(iter(kind)) if len(kind) == 1 else None
                body = self.lines(sub, x, resolver, single) or ["pass"]
                out.append(f"{'if' if number == 0 else 'elif'} {test}:")
                out += ["    " + line for line in body]
            return out + ["else:", "    return False"]
        if known == "object" and all(set(sub) == {"required"} for sub in branches):
            # Which keys are present; one key is a plain membership test (a Delta op's kind).
            tests = [
                f"({sub['required'][0]!r} in {x})"
                if len(sub["required"]) == 1
                else f"({x}.keys() >= {self.constant(frozenset(sub['required']))})"
                for sub in branches
            ]
        else:
            tests = [f"{self.function(sub, resolver)}({x})" for sub in branches]
        if keyword == "oneOf":
            return [f"if ({' + '.join(tests)}) != 1: return False"]
        return [f"if not ({' or '.join(tests)}): return False"]


_HANDLED = {
    "$ref", "type", "const", "enum", "minimum", "maximum", "minLength", "maxLength", "pattern", "required",
    "minProperties", "maxProperties", "properties", "additionalProperties", "minItems",
    "maxItems", "items", "oneOf", "anyOf", "allOf",
}  # fmt: skip


def compile_schema(schema: Mapping, resolver) -> Callable[[object], bool]:
    """A predicate true only for instances valid under `schema` (see the module docstring)."""
    compiler = _Compiler()
    entry = compiler.function(schema, resolver)
    source = "".join(compiler.functions)
    namespace: dict[str, object] = dict(compiler.constants)
    exec(compile(source, "<compiled coauthor schema>", "exec"), namespace)  # noqa: S102
    return namespace[entry]  # type: ignore[return-value]
