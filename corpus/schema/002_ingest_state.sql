-- What ingest has seen: a watermark per category query and a status per paper (also for papers
-- that failed or had no text, so a rerun neither retries a broken PDF nor loses the reason).
CREATE TABLE ingest_watermarks (
    category      text PRIMARY KEY,             -- as given: 'cs', 'cs.CL'
    last_updated  timestamptz NOT NULL,         -- newest arXiv 'updated' fully handled
    last_run_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ingest_items (
    paper_id       text PRIMARY KEY,
    version        integer,
    source         text NOT NULL,
    location       text,                         -- URL or file path
    source_sha256  text,
    status         text NOT NULL CHECK (status IN ('ok', 'empty', 'failed')),
    reason         text,
    retryable      boolean NOT NULL DEFAULT false, -- download problems are; broken PDFs are not
    n_chunks       integer NOT NULL DEFAULT 0,
    attempts       integer NOT NULL DEFAULT 1,
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ingest_items_status_idx ON ingest_items (status);
