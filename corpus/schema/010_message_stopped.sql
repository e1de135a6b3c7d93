-- An answer the person stopped while it was being written: saved with what was written so far,
-- and marked, so the page and exports say it is unfinished.
ALTER TABLE messages ADD COLUMN stopped boolean NOT NULL DEFAULT false;
