"""Statements sent to PostgreSQL together, in one round trip, on libpq's pipeline directly.

The event API's group commit sends each stage of its batches (their reads under lock, then their
inserts) as one round (study.store.group_commit), and a model call's admission and outcome go
the same way. psycopg's pipeline mode did this at about twice the CPU of the work itself: it
drives its network loop once for every statement queued and builds a cursor for each, so a
transaction of three statements cost about 350 us of CPU in the client. Here the round is
queued on the libpq connection under psycopg (`Connection.pgconn`), flushed once, and its
results read back: about 170 us for the same transaction, and the same work for the server.

Statements are prepared on the server once per connection, each under a name made from its
text, in the round that first uses it: planning them again for every batch cost PostgreSQL
about half as much CPU again (docs/benchmarks.md). psycopg's own automatic
preparing is off on the study's connections (study.store.engine.make_engine): it would send
DEALLOCATE ALL after any rolled-back transaction, dropping ours with its own. Parameters go as
text, their types taken from the statement (a `?` compared with an integer column is one).
"""

from __future__ import annotations

import hashlib
import re
import weakref
from collections.abc import Sequence

from psycopg import Connection, errors, generators, pq
from psycopg.adapt import Transformer

# One statement of a round: SQL with `?` placeholders, and its parameters.
Statement = tuple[str, Sequence]

_OK = (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK)


class _Prepared:
    """What one connection has prepared, and its loader of result rows."""

    __slots__ = ("names", "transformer")

    def __init__(self, connection: Connection) -> None:
        self.names: set[bytes] = set()
        self.transformer = Transformer(connection)


_prepared: weakref.WeakKeyDictionary[Connection, _Prepared] = weakref.WeakKeyDictionary()
# Statement text -> (its name on the server, its text in PostgreSQL's $n style).
_statements: dict[str, tuple[bytes, bytes]] = {}


def send(
    connection: Connection, statements: Sequence[Statement], *, begin: bool = False, commit: bool = False
) -> list[list[tuple]]:
    """The rows of each statement ([] for one that returns none), run in order in one round trip.
    `begin`: a BEGIN first, and the statements in its transaction (else in the transaction in
    progress, or together in one of their own); `commit`: a COMMIT after them. An error the
    server returns is raised as psycopg's once the round is read to its end: the connection is
    left usable and its transaction failed, for the caller to roll back."""
    pgconn = connection.pgconn
    known = _prepared.get(connection)
    if known is None:
        known = _prepared[connection] = _Prepared(connection)
    queued = [(*_statement(sql), [_text(value) for value in parameters]) for sql, parameters in statements]
    # Per command queued, what its answer is: a statement's rows (None), or a Parse's (the name).
    sent: list[bytes | None] = []
    pgconn.enter_pipeline_mode()
    try:
        if begin:
            pgconn.send_query_params(b"BEGIN", None)
            sent.append(b"")
        for name, text, values in queued:
            if name not in known.names and name not in sent:
                pgconn.send_prepare(name, text)
                sent.append(name)
            pgconn.send_query_prepared(name, values)
            sent.append(None)
        if commit:
            pgconn.send_query_params(b"COMMIT", None)
            sent.append(b"")
        pgconn.pipeline_sync()
        connection.wait(generators.send(pgconn))
        answers = [connection.wait(generators.fetch_many(pgconn)) for _ in sent]
        synced = connection.wait(generators.fetch_many(pgconn))
        if not synced or synced[0].status != pq.ExecStatus.PIPELINE_SYNC:
            raise errors.InterfaceError("PostgreSQL answered a round out of step")
        pgconn.exit_pipeline_mode()
    except BaseException:
        # Cut off mid-round (a lost connection, an interrupt): what the server has done is
        # unknown, so the connection is closed (and what it prepared with it), and its pool
        # replaces it.
        connection.close()
        raise
    # A statement is prepared once its Parse is answered (one after an error is skipped).
    known.names.update(name for name, answer in zip(sent, answers) if name and answer[-1].status in _OK)
    failed = next((result for answer in answers for result in answer if result.status not in _OK), None)
    if failed is not None:
        raise _error(failed, connection)
    rows = []
    transformer = known.transformer
    for kind, answer in zip(sent, answers, strict=True):
        if kind is not None:
            continue
        result = answer[-1]
        if result.status == pq.ExecStatus.TUPLES_OK:
            transformer.set_pgresult(result)
            rows.append(transformer.load_rows(0, result.ntuples, tuple))
        else:
            rows.append([])
    return rows


def idle(connection: Connection) -> bool:
    """Whether no transaction is in progress on the connection (a round then needs `begin` to
    run in one)."""
    return connection.pgconn.transaction_status == pq.TransactionStatus.IDLE


def _statement(sql: str) -> tuple[bytes, bytes]:
    found = _statements.get(sql)
    if found is None:
        if re.search(r"\?\d", sql):
            raise ValueError(f"numbered placeholders (?1) are SQLite's: write a plain ? for each value: {sql}")
        parts = sql.split("?")
        text = "".join(part + (f"${number}" if number < len(parts) else "") for number, part in enumerate(parts, 1))
        name = b"study_" + hashlib.sha1(sql.encode()).hexdigest()[:16].encode()
        found = _statements[sql] = (name, text.encode())
    return found


def _text(value) -> bytes | None:
    """A parameter in PostgreSQL's text form."""
    if value is None:
        return None
    kind = type(value)
    if kind is str:
        return value.encode()
    if kind is int or kind is float:
        return repr(value).encode()
    raise TypeError(f"a statement parameter must be a string, an integer, a float or None, not {kind.__name__}")


def _error(result: pq.abc.PGresult, connection: Connection) -> Exception:
    if result.status == pq.ExecStatus.PIPELINE_ABORTED:
        return errors.InFailedSqlTransaction("the round was abandoned after an earlier error")
    return errors.error_from_result(result, encoding=connection.info.encoding)
