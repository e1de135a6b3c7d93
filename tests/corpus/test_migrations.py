import psycopg

from corpus.migrations import applied, available, migrate


def test_migrations_are_idempotent_and_recorded(fresh_db: str) -> None:
    with psycopg.connect(fresh_db, autocommit=True) as conn:
        assert migrate(conn) == []  # the template already ran them
        versions = applied(conn)
        assert versions == [v for v, _, _ in available()] and versions[:2] == [1, 2]
        indexes = dict(
            conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'chunks'").fetchall()
        )
    assert "USING hnsw (embedding halfvec_cosine_ops)" in indexes["chunks_embedding_hnsw"]


def test_migrate_from_scratch(pg_admin_url: str) -> None:
    from psycopg.conninfo import make_conninfo

    from corpus.db import ensure_database

    ensure_database(pg_admin_url, "scratch_migrations")
    with psycopg.connect(make_conninfo(pg_admin_url, dbname="scratch_migrations"), autocommit=True) as conn:
        assert migrate(conn) == [v for v, _, _ in available()]
        assert migrate(conn) == []
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert {"papers", "chunks", "ingest_items", "ingest_watermarks", "schema_migrations"} <= tables


def test_connections_use_the_configured_hnsw_breadth(fresh_db: str, tmp_path) -> None:
    from corpus.db import Database
    from tests.conftest import make_settings

    db = Database(make_settings(fresh_db, tmp_path, hnsw_ef_search=123))
    with db.connect() as conn:
        assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "123"
    with db.pooled() as conn:
        assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "123"
    db.close()
