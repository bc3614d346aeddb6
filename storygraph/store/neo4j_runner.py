"""Runner for Neo4j 5 through the official driver: one driver per process, same queries."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from storygraph.cypher import SCHEMA_DROP_NEO4J, SCHEMA_NEO4J
from storygraph.errors import StoreError
from storygraph.store.runner import Row, Statement


def safe_uri(uri: str) -> str:
    """The URI without any `user:password@` part, for messages and logs."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return "(an unparsable NEO4J_URI)"
    if "@" not in parts.netloc:
        return uri
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


class Neo4jRunner:
    """Runs Cypher on a Neo4j 5 database; a batch is one write transaction."""

    engine = "neo4j"
    schema = SCHEMA_NEO4J
    schema_drops = SCHEMA_DROP_NEO4J

    def __init__(self, uri: str, username: str, password: str, database: str) -> None:
        import neo4j
        from neo4j.exceptions import AuthError, ConfigurationError, ServiceUnavailable

        self.uri = safe_uri(uri)
        uri_text = self.uri
        self.database = database
        try:
            self._driver = neo4j.GraphDatabase.driver(uri, auth=(username, password))
            self._driver.verify_connectivity()
        except ConfigurationError as exc:
            raise StoreError(
                f"NEO4J_URI ({uri_text}) is not usable: {type(exc).__name__}.",
                "Use bolt://host:7687 or neo4j://host:7687 and put the credentials in "
                "NEO4J_USERNAME / NEO4J_PASSWORD, not in the URI.",
            ) from None
        except AuthError as exc:
            raise StoreError(
                f"Neo4j at {uri_text} refused the credentials.",
                "Check NEO4J_USERNAME and NEO4J_PASSWORD.",
            ) from exc
        except (ServiceUnavailable, OSError, ValueError) as exc:
            raise StoreError(
                f"Neo4j at {uri_text} is not reachable ({type(exc).__name__}).",
                "Start Neo4j (see README: Neo4j with Docker) or unset NEO4J_URI to use the "
                "embedded graph database.",
            ) from exc

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[Row]:
        from neo4j.exceptions import Neo4jError, ServiceUnavailable

        try:
            records, _, _ = self._driver.execute_query(query, params or {}, database_=self.database)
        except ServiceUnavailable as exc:
            raise StoreError(
                f"Neo4j at {self.uri} stopped answering.", "Check the server."
            ) from exc
        except Neo4jError as exc:
            raise StoreError(f"Neo4j refused a query: {exc.message}") from exc
        return [record.data() for record in records]

    def run_batch(self, statements: Sequence[Statement]) -> list[Row]:
        from neo4j.exceptions import Neo4jError, ServiceUnavailable

        def work(tx: Any) -> list[Row]:
            rows: list[Row] = []
            for query, params in statements:
                rows = [record.data() for record in tx.run(query, params)]
            return rows

        try:
            with self._driver.session(database=self.database) as session:
                rows: list[Row] = session.execute_write(work)
        except ServiceUnavailable as exc:
            raise StoreError(
                f"Neo4j at {self.uri} stopped answering.", "Check the server."
            ) from exc
        except Neo4jError as exc:
            raise StoreError(f"Neo4j refused a write: {exc.message}") from exc
        return rows

    def run_each(self, statements: Sequence[Statement]) -> Iterator[list[Row]]:
        """Run statements in order, each in its own transaction, yielding each one's rows."""
        for query, params in statements:
            yield self.run(query, params)

    def describe(self) -> str:
        return f"Neo4j ({self.uri}, database '{self.database}')"

    def close(self) -> None:
        self._driver.close()
