"""Runner for embedded FalkorDB through its native client (never its Bolt port)."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import redis
from falkordb import FalkorDB

from storygraph.cypher import SCHEMA_FALKORDB
from storygraph.errors import StoreError
from storygraph.store.falkordb_params import params_header
from storygraph.store.falkordb_server import CRASH_FIX, EmbeddedFalkorDB
from storygraph.store.runner import Row, Statement

_CONNECTION_ERRORS = (redis.ConnectionError, redis.TimeoutError, ConnectionError, OSError)


QUERY_TIMEOUT_S = 60.0
"""Longest wait for one query's reply (the largest import of the benchmarks takes ~2 s)."""

TEXTS_AHEAD = 2
"""Statements of a batch whose text (parameters header + query) is built ahead, in a thread,
while the server runs the current one (docs/ISSUES.md#import-1m-edges)."""


def _text(statement: Statement) -> str:
    query, params = statement
    # the parameters' header built here, as the client would, only faster (falkordb_params)
    return params_header(params) + query


class FalkorDBRunner:
    """Runs Cypher on one graph of an embedded FalkorDB server; restarts the server if it died."""

    engine = "falkordb"
    schema = SCHEMA_FALKORDB
    schema_drops: tuple[str, ...] = ()

    def __init__(self, server: EmbeddedFalkorDB, graph_name: str) -> None:
        self.server = server
        self.graph_name = graph_name
        self._db: FalkorDB | None = None
        self._graph: Any = None
        self._ahead: dict[int, tuple[str, Future[str]]] = {}
        """Texts run_each is building, by the identity of their statement's parameters (the
        statements are alive while run_each runs them), with their query."""
        self._connect()

    def _connect(self) -> None:
        socket = self.server.ensure_running()
        # A bounded wait: a server that stops answering becomes a TimeoutError (see run()),
        # not a hang.
        self._db = FalkorDB(unix_socket_path=str(socket), socket_timeout=QUERY_TIMEOUT_S)
        self._graph = self._db.select_graph(self.graph_name)

    def _query(self, text: str) -> list[Row]:
        result = self._graph.query(text)
        names = [str(column[1]) for column in (result.header or [])]
        return [dict(zip(names, row, strict=False)) for row in result.result_set or []]

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[Row]:
        ahead = self._ahead.pop(id(params), None) if params else None
        if ahead is not None and ahead[0] is query:
            return self._run_text(ahead[1].result())
        return self._run_text(_text((query, params or {})))

    def _run_text(self, text: str) -> list[Row]:
        rows = self._attempt(text)
        self.server.worked()  # ends a row of crashes; reads its ledger once per server process
        return rows

    def _attempt(self, text: str) -> list[Row]:
        try:
            return self._query(text)
        except redis.TimeoutError:
            # No reply within QUERY_TIMEOUT_S: a server stuck on a lock (seen: FalkorDB waiting
            # forever in Globals_AddGraph on a fresh graph) never recovers by itself. Replace it
            # and retry once; the writes are idempotent (see below).
            try:
                self.server.replace_hung_server()
                self._connect()
                return self._query(text)
            except _CONNECTION_ERRORS as exc:
                raise self._not_answering(exc) from exc
        except _CONNECTION_ERRORS:
            # The server died (crash, kill, machine sleep): restart it once and retry (a second
            # crash in a row is a StoreError from ensure_running, storygraph.crashes). The
            # statement may have been applied with only its reply lost, so every write in
            # storygraph/cypher.py is idempotent: nodes and edges are MERGEd on their ids, and
            # chunk ids (with their votes / evidence) are added as a set union, never appended
            # twice (tests/faults/test_concurrency.py kills the server after a write is applied).
            try:
                self._connect()
                return self._query(text)
            except _CONNECTION_ERRORS as exc:
                raise self._not_answering(exc) from exc
        except redis.ResponseError as exc:
            raise StoreError(f"The graph database refused a query: {exc}") from exc

    def _not_answering(self, exc: BaseException) -> StoreError:
        """The error for a retry that failed too: the server's crash in words when it crashed
        (refused a restart after the second in a row), else 'not answering'."""
        crash = self.server.fault()
        if crash is None:
            return StoreError(
                f"The embedded graph database is not answering ({exc}).",
                f"Check {self.server.paths.logfile}; restart the app.",
            )
        refused = self.server.refusal()
        if refused is not None:
            return refused
        sentence = crash.sentence[:1].upper() + crash.sentence[1:]
        return StoreError(f"{sentence}.", f"It is restarted at the next use. {CRASH_FIX}")

    def run_batch(self, statements: Sequence[Statement]) -> list[Row]:
        # FalkorDB has no multi-statement transactions; GraphStore makes the batch
        # all-or-nothing at the document level (pending status + cleanup).
        last = deque(self.run_each(statements), maxlen=1)
        return last[0] if last else []

    def run_each(self, statements: Sequence[Statement]) -> Iterator[list[Row]]:
        """Run statements in order, yielding each one's rows. The text of the next
        TEXTS_AHEAD statements is built in a thread while the server runs the current one
        (the client's serialising of a 1M-edge import's parameters is seconds of one core
        that the server's work hides). Each statement still goes through `run`, one at a
        time, in order, on this connection."""
        if len(statements) < 2:
            for query, params in statements:
                yield self.run(query, params)
            return
        mine: list[int] = []
        try:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="falkordb-text") as pool:
                for index, (query, params) in enumerate(statements):
                    for statement in statements[index + 1 : index + 1 + TEXTS_AHEAD]:
                        key = id(statement[1])
                        if statement[1] and key not in self._ahead:
                            self._ahead[key] = (statement[0], pool.submit(_text, statement))
                            mine.append(key)
                    yield self.run(query, params)
        finally:
            for key in mine:  # texts built for statements that did not run (an error)
                self._ahead.pop(key, None)

    def describe(self) -> str:
        return f"embedded FalkorDB (graph '{self.graph_name}', {self.server.paths.root})"

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(Exception):  # closing a dead connection is fine
                self._db.connection.close()
        self._db = None
        self.server.stop()  # only stops a server this process started
