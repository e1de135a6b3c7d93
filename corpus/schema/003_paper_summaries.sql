-- Cached whole-paper summaries (map-reduce with an LLM is expensive): per paper version and model.
CREATE TABLE paper_summaries (
    paper_id    text NOT NULL REFERENCES papers (paper_id) ON DELETE CASCADE,
    version     integer NOT NULL,
    model       text NOT NULL,
    summary     text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (paper_id, version, model)
);
