-- Papers and their chunks. Vectors are halfvec: MiniLM's unit vectors lose nothing measurable at
-- 16 bits and both the heap and the HNSW graph shrink by half.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE papers (
    paper_id          text PRIMARY KEY,          -- arXiv id without version, or 'local:<sha256 prefix>'
    version           integer,                   -- arXiv version number, NULL when unknown
    title             text NOT NULL,
    authors           text[] NOT NULL DEFAULT '{}',
    abstract          text,
    categories        text[] NOT NULL DEFAULT '{}',
    primary_category  text,
    published         timestamptz,               -- first version
    updated           timestamptz,               -- this version
    pdf_url           text,
    source            text NOT NULL,             -- 'arxiv', 'pdf-dir', 'snapshot'
    source_sha256     text,                      -- of the PDF bytes the chunks came from
    n_pages           integer,
    n_chunks          integer NOT NULL DEFAULT 0,
    embedding         halfvec(384),              -- title + abstract, for paper-level search
    ingested_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX papers_recency_idx ON papers (published DESC NULLS LAST);
CREATE INDEX papers_embedding_hnsw ON papers USING hnsw (embedding halfvec_cosine_ops);

-- (paper_id, seq) is the chunk id: the prior/next chunk of any chunk is one primary-key lookup.
-- The text is stored zlib-compressed by corpus/papers.py (the only reader and writer): rows of
-- ~1.7 kB stay under PostgreSQL's 2 kB TOAST threshold, so the server never compresses them itself,
-- and compression cuts a chunk's footprint by ~0.4 kB (11M chunks: ~4.5 GB).
CREATE TABLE chunks (
    paper_id    text NOT NULL REFERENCES papers (paper_id) ON DELETE CASCADE,
    seq         integer NOT NULL,
    page        integer,                         -- 1-based page where the chunk starts
    char_start  integer,                         -- offset in the paper's cleaned text
    text_z      bytea NOT NULL,                  -- zlib(utf-8 text)
    embedding   halfvec(384) NOT NULL,
    PRIMARY KEY (paper_id, seq)
);
ALTER TABLE chunks ALTER COLUMN text_z SET STORAGE PLAIN;
ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE PLAIN;
CREATE INDEX chunks_embedding_hnsw ON chunks USING hnsw (embedding halfvec_cosine_ops);
