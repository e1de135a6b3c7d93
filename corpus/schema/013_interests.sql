-- A user's interests, for the personal inbox of new papers. `owner` is chats.owner (a user id, or
-- 'local' for the terminal and single-user mode), so the inbox works without accounts too.

-- Followed topics: free text, embedded like a question, used for the cold start and for "why".
CREATE TABLE IF NOT EXISTS interest_topics (
    owner       text NOT NULL,
    topic       text NOT NULL,
    embedding   halfvec(384) NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner, topic)
);

-- 👍 (+1) / 👎 (-1) of a paper, from a source card, the inbox, the terminal or an imported library.
CREATE TABLE IF NOT EXISTS paper_ratings (
    owner     text NOT NULL,
    paper_id  text NOT NULL REFERENCES papers (paper_id) ON DELETE CASCADE,
    rating    smallint NOT NULL CHECK (rating IN (-1, 1)),
    source    text NOT NULL CHECK (source IN ('inbox', 'card', 'terminal', 'library', 'start')),
    rated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner, paper_id)
);

-- The trained ranker of a user (a linear model over paper vectors) and the inbox's bookkeeping.
-- Only a hash of the feed token is stored: a leaked table does not open anybody's feed.
CREATE TABLE IF NOT EXISTS inbox_profiles (
    owner            text PRIMARY KEY,
    weights          real[],                -- 384 weights then the bias; NULL: nothing to learn from yet
    trained_on       jsonb NOT NULL DEFAULT '{}',   -- counts of what the weights were learned from
    trained_at       timestamptz,
    implicit         boolean NOT NULL DEFAULT true, -- papers the user's chats cited count as weak 👍
    visited_at       timestamptz,           -- the latest visit of the inbox
    previous_visit   timestamptz,           -- the one before: "new since your last visit" starts there
    feed_token_hash  bytea UNIQUE
);

CREATE INDEX IF NOT EXISTS paper_ratings_paper_idx ON paper_ratings (paper_id);  -- a paper deleted

-- When a paper first arrived: the inbox's "new". ingested_at moves on every new version or forced
-- re-ingest, which would bring an old paper back into every inbox.
ALTER TABLE papers ADD COLUMN IF NOT EXISTS first_ingested_at timestamptz;
UPDATE papers SET first_ingested_at = ingested_at WHERE first_ingested_at IS NULL;
ALTER TABLE papers ALTER COLUMN first_ingested_at SET DEFAULT now();
ALTER TABLE papers ALTER COLUMN first_ingested_at SET NOT NULL;
CREATE INDEX IF NOT EXISTS papers_first_ingested_idx ON papers (first_ingested_at DESC);
