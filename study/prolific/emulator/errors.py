"""Error answers in Prolific's shape: `{"error": {"status", "error_code", "title", "detail",
"additional_information"}}`, the body Prolific's own CLI (prolific-oss/cli) decodes.

`detail` is a string, or for field validation `{"field": ["message"]}` as Django REST Framework
(which Prolific's API is built on) answers it. The numeric `error_code` is the emulator's own
(140000 + HTTP status); a client should branch on the HTTP status, never on these numbers.
"""

from __future__ import annotations

TITLES = {
    400: "Bad request",
    401: "Not authenticated",
    404: "Not found",
    405: "Method not allowed",
    500: "Internal server error",
    503: "Service unavailable",
}


class ApiError(Exception):
    """An error answer from the API: raised by an operation, turned into JSON by the wire."""

    def __init__(self, status: int, detail: str | dict) -> None:
        # Both in args, so the error pickles whole (tests/test_exceptions.py).
        super().__init__(status, detail)
        self.status = status
        self.detail = detail

    def __str__(self) -> str:
        return self.detail if isinstance(self.detail, str) else repr(self.detail)

    def body(self) -> dict:
        return error_body(self.status, self.detail)


def error_body(status: int, detail: str | dict) -> dict:
    code = 140000 + status
    return {
        "error": {
            "status": status,
            "error_code": code,
            "title": TITLES.get(status, "Error"),
            "detail": detail,
            "additional_information": f"/api/v1/errors/{code}",
        }
    }


def invalid(field: str, message: str) -> ApiError:
    """A 400 on one field, as DRF words a validation error."""
    return ApiError(400, {field: [message]})


def not_found() -> ApiError:
    return ApiError(404, "Not found.")
