"""The task server's OpenAPI 3.1 description, made from the routes' declared contracts.

Served at /api/openapi.json (README, "Request contracts") so a researcher can see what the
editor, the chat page and the survey forms send, and read by the property-based tests
(tests/contract) to generate requests. Nothing here restates a format: every schema is the one
under schemas/ that the door (study.server.contract) checks, inlined. OpenAPI 3.1 speaks JSON
Schema 2020-12, so the schemas go in as they are.
"""

from __future__ import annotations

import re

from flask import Flask

from study import __version__
from study.server import contract

# Flask writes `<int:occasion>`, OpenAPI `{occasion}`.
_PARAMETER = re.compile(r"<(?:[a-z]+:)?([A-Za-z_]+)>")
_FORM = "application/x-www-form-urlencoded"


def _path_parameter(name: str) -> dict:
    schema = contract.inlined(contract.PATH_PARAMETERS)["properties"][name]
    return {"name": name, "in": "path", "required": True, "schema": schema,
            "description": schema.get("description", "")}  # fmt: skip


def _query_parameters(reference: str | None) -> list[dict]:
    if reference is None:
        return []
    schema = contract.inlined(reference)
    required = set(schema.get("required", ()))
    return [
        {"name": name, "in": "query", "required": name in required, "schema": sub}
        for name, sub in schema.get("properties", {}).items()
    ]


def _refusal_content(path: str) -> dict:
    """How the door (and Flask's 404) answers a refusal on `path`: JSON under /api/; elsewhere
    a short HTML page, or JSON to a client that sent JSON or asks for it
    (study.server.contract._refuse)."""
    error = {"application/json": {"schema": contract.inlined(contract.ERROR)}}
    return error if path.startswith("/api/") else {"text/html": {}, **error}


def _responses(declared: contract.Contract, with_body: bool, path: str, parameters: bool, body: bool = False) -> dict:
    answers = {}
    for status, reference in sorted(declared.responses.items()):
        if reference is None:
            answers[str(status)] = {"description": "a page (text/html)", "content": {"text/html": {}}}
        else:
            schema = contract.inlined(reference)
            answers[str(status)] = {"description": schema.get("description", "JSON"),
                                    "content": {"application/json": {"schema": schema}}}  # fmt: skip
    if with_body and str(declared.refusal) not in answers:
        # The door's refusal of a request that breaks the declaration.
        answers[str(declared.refusal)] = {
            "description": "the request breaks its declared schema; `error` names the field",
            "content": _refusal_content(path),
        }
    if declared.body is not None and "400" not in answers:
        # A body the door cannot parse is a 400 whatever the declaration's refusal (the event
        # batches' 422 says "this batch will never be stored"; study.server.contract).
        answers["400"] = {"description": "the body is not JSON", "content": _refusal_content(path)}
    if body and "413" not in answers:
        # Past [session] max_request_bytes, before the body is read (study.server.create_app):
        # the editor's outbox halves its batches on it.
        answers["413"] = {"description": "the body is larger than [session] max_request_bytes",
                          "content": _refusal_content(path)}  # fmt: skip
    if parameters and "404" not in answers:
        # A path parameter that cannot name anything, or names nothing stored (an unknown session).
        answers["404"] = {"description": "the path names nothing this server has", "content": _refusal_content(path)}
    return answers or {"200": {"description": "OK"}}


def _operation(rule, method: str, declared: contract.Contract) -> dict:
    operation: dict = {"summary": declared.summary, "operationId": f"{rule.endpoint}.{method}"}
    parameters = [_path_parameter(name) for name in sorted(rule.arguments)]
    parameters += _query_parameters(declared.query)
    if parameters:
        operation["parameters"] = parameters
    if declared.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": contract.inlined(declared.body)}},
        }
    elif declared.form is not None and method == "post":
        operation["requestBody"] = {"content": {_FORM: {"schema": contract.inlined(declared.form)}}}
    sends = "requestBody" in operation or declared.query is not None
    operation["responses"] = _responses(declared, sends, rule.rule, bool(rule.arguments), "requestBody" in operation)
    return operation


def describe(app: Flask, title: str) -> dict:
    """The OpenAPI document of every declared route of `app`."""
    paths: dict[str, dict] = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if contract.is_static(rule.endpoint):
            continue
        declared = contract.contract_of(app.view_functions.get(rule.endpoint))
        if declared is None:
            continue  # tests/server/test_contract_pages.py fails on an undeclared route
        path = _PARAMETER.sub(r"{\1}", rule.rule)
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            paths.setdefault(path, {})[method.lower()] = _operation(rule, method.lower(), declared)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": title,
            "version": __version__,
            "description": "What the writing editor, the chat page, the survey forms and the reviewers' "
            "workspace send, as the task server checks it (schemas/api/). Every request breaking its "
            "declaration is refused with a 4xx naming the field, before anything is stored or a "
            "model is called.",
        },
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "paths": paths,
    }


def serve(app: Flask, title: str) -> None:
    """Answer the description at /api/openapi.json (built once: routes do not change at run time)."""
    document = describe(app, title)

    @app.get("/api/openapi.json")
    @contract.declare("This description (OpenAPI 3.1)")
    def openapi():
        return document
