"""The task server's answers handed to the server in one piece.

A WSGI app answers with an iterable of bytes. werkzeug wraps every answer in an iterator that
closes the response once it is sent (`ClosingIterator`), even a JSON answer already whole in
memory. granian takes a list's bytes at once and hands them to its HTTP side; any other
iterable it streams: a channel to its HTTP side, and the GIL let go and taken back for each
piece. A suggestion's answer, a page, a refusal: each paid for that. In runs of 1,000 small
JSON answers of a Flask view under granian, one every 8 ms on a 2-vCPU host, six runs of each
kind alternated, an answer took 900-980 us of the server's CPU as a list against 980-1,080 us
as werkzeug's iterator (docs/benchmarks.md).

So an answer whose body is already a sequence of bytes and that has nothing to run once it is
sent goes to the server as a list; everything else is werkzeug's as before: a streamed body,
a file (`send_file`'s passthrough), a HEAD request, and an answer with a `call_on_close`
callback (study.server.activity stores its interval only once the answer is sent), which the
server runs when it closes the iterator.
"""

from __future__ import annotations

from flask import Response


class WholeResponse(Response):
    def get_app_iter(self, environ: dict):
        status = self.status_code
        whole = (
            self.is_sequence
            and not self.direct_passthrough
            # werkzeug's list of callbacks to run once the answer is sent (`call_on_close`);
            # with another werkzeug that has none by this name, nothing changes.
            and getattr(self, "_on_close", None) == []
            # werkzeug sends no body for these (its get_app_iter).
            and environ["REQUEST_METHOD"] != "HEAD"
            and status >= 200
            and status not in (204, 304)
        )
        return list(self.iter_encoded()) if whole else super().get_app_iter(environ)
