"""Connections to the corpus database: DATABASE_URL when set, else the embedded server."""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ground.settings import Settings

APP_DATABASE = "chatpapers"


class DatabaseUnavailable(RuntimeError):
    """The database cannot be reached; the message says where and why, for people."""


class Database:
    """Resolves the database URL once (starting the embedded server if needed) and hands out
    connections with pgvector types registered. Migrations run on first use."""

    def __init__(self, settings: Settings, dbname: str | None = None, migrate: bool = True) -> None:
        self.settings = settings
        self._dbname = dbname
        self._migrate = migrate
        self._url: str | None = None
        self._lock = threading.Lock()
        self._pool = None
        self.pool_size = 8

    @property
    def url(self) -> str:
        with self._lock:
            if self._url is None:
                self._url = self._resolve_url()
                if self._migrate:
                    from corpus.migrations import migrate

                    with self._raw_connect(autocommit=True) as conn:
                        migrate(conn)
            return self._url

    def _resolve_url(self) -> str:
        if self.settings.database_url:
            url = self.settings.database_url
            if self._dbname:
                url = make_conninfo(url, dbname=self._dbname)
            return url
        from corpus.embedded import EmbeddedServerError, start_embedded

        try:
            admin_url = start_embedded(self.settings.pg_data_dir)
        except EmbeddedServerError as exc:
            raise DatabaseUnavailable(str(exc)) from exc
        dbname = self._dbname or APP_DATABASE
        ensure_database(admin_url, dbname)
        return make_conninfo(admin_url, dbname=dbname)

    def _raw_connect(self, autocommit: bool = False) -> psycopg.Connection:
        assert self._url is not None
        try:
            return psycopg.connect(self._url, autocommit=autocommit, connect_timeout=10)
        except psycopg.OperationalError as exc:
            raise DatabaseUnavailable(
                f"cannot connect to the database ({self.settings.describe_database()}): "
                f"{str(exc).strip().splitlines()[0] if str(exc).strip() else exc}"
            ) from exc

    def connect(self, autocommit: bool = False) -> psycopg.Connection:
        _ = self.url
        conn = self._raw_connect(autocommit=autocommit)
        self._configure(conn)
        return conn

    def _configure(self, conn: psycopg.Connection) -> None:
        """Every connection, pooled or not: pgvector types and the HNSW search breadth."""
        from pgvector.psycopg import register_vector

        register_vector(conn)
        conn.execute(f"SET hnsw.ef_search = {int(self.settings.hnsw_ef_search)}")
        if not conn.autocommit:
            conn.commit()  # a session SET lasts once committed; pools want idle connections

    def pooled(self) -> AbstractContextManager[psycopg.Connection]:
        """A connection from a small pool (pgvector types registered once per connection): for
        hot paths such as agent tools and API requests. Commits on success, rolls back on error."""
        url = self.url  # resolves (and migrates) first, under its own lock
        with self._lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                self._pool = ConnectionPool(
                    url,
                    min_size=1,
                    max_size=self.pool_size,
                    configure=self._configure,
                    open=True,
                    kwargs={"connect_timeout": 10},
                    name="chatpapers",
                )
        return self._pool.connection()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def describe(self) -> str:
        return self.settings.describe_database()


def ensure_database(admin_url: str, dbname: str, template: str | None = None) -> None:
    """CREATE DATABASE unless it exists (safe when two processes race)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        if exists:
            return
        stmt = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname))
        if template:
            stmt += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        try:
            conn.execute(stmt)
        except psycopg.errors.DuplicateDatabase:
            pass
        except psycopg.errors.UniqueViolation:
            pass


def dbname_of(url: str) -> str:
    return conninfo_to_dict(url).get("dbname", "")
