-- Papers whose title, authors and abstract were read from their own first page (a PDF that came
-- without metadata): `db refresh` may correct those descriptions (a better reading of the page,
-- arXiv's record) and leaves alone the ones that came with the paper. Before this column, such
-- papers were the ones ingested from files without authors.
ALTER TABLE papers ADD COLUMN IF NOT EXISTS described_from_pdf boolean NOT NULL DEFAULT false;
UPDATE papers SET described_from_pdf = true
 WHERE source IN ('pdf-dir', 'pdf-tar') AND coalesce(cardinality(authors), 0) = 0;
