-- The passage each citation of an answer points at (paper id -> chunk id), so the web page can
-- open the cited text next to the answer.
ALTER TABLE messages ADD COLUMN passages jsonb NOT NULL DEFAULT '{}';
