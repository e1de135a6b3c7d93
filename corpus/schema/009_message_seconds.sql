-- How long an answer took, from the question to the saved answer, in seconds: shown under the
-- answer with its model and tokens (both already stored), and in exports.
ALTER TABLE messages ADD COLUMN seconds real;
