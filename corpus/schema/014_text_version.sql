-- Which version of ingest's text extraction (ingest/prepare.py TEXT_VERSION) made a paper's stored
-- text. NULL: stored before this column. The extraction gets better (running headers dropped, math
-- signs kept, ...) and a stored paper keeps the text it was stored with: an item recorded by an
-- older extraction is read again by the next ingest of its file, or by `chatpapers db refresh`.
ALTER TABLE ingest_items ADD COLUMN IF NOT EXISTS text_version integer;
