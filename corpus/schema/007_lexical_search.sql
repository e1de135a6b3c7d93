-- Lexical search beside the vectors, for the words a 384-d sentence vector blurs: names of
-- methods, datasets and authors ("ADADELTA", "ZeRO", "Hershey"). A paper's words are its title
-- (weight A), abstract (B), authors (C) and the opening of its full text (D). Writers set `tsv`
-- through paper_tsv(); the full text comes from ingest (chunk text is stored compressed, out of
-- SQL's reach), so rows stored before this migration get their metadata words now and their full
-- text words from `chatpapers db refresh`.
CREATE FUNCTION paper_tsv(title text, abstract text, authors text[], body text) RETURNS tsvector
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector('english', coalesce(title, '')), 'A')
        || setweight(to_tsvector('english', coalesce(abstract, '')), 'B')
        || setweight(to_tsvector('simple', coalesce(array_to_string(authors, ' '), '')), 'C')
        || setweight(to_tsvector('english', coalesce(body, '')), 'D')
$$;
ALTER TABLE papers ADD COLUMN tsv tsvector;
UPDATE papers SET tsv = paper_tsv(title, abstract, authors, NULL);
CREATE INDEX papers_tsv_gin ON papers USING gin (tsv);
