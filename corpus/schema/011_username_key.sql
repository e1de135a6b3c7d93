-- One canonical form of a username for comparison, limits and uniqueness: control and format
-- characters removed, NFKC, case folded. corpus.accounts.username_key computes it in Python for
-- every lookup; PostgreSQL's lower() is no longer consulted (it maps 'İ' to 'i' where Python does
-- not, so one spelling of a name was "another" account for the sign-in limiter and "the same" for
-- the database). Names are ASCII by rule, where lower(normalize(.., NFKC)) is the case fold.
ALTER TABLE users ADD COLUMN IF NOT EXISTS username_key text;
UPDATE users
   SET username_key = lower(normalize(
         regexp_replace(username, E'[\\x01-\\x1f\\x7f-\\x9f\\u00ad\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff]', '', 'g'),
         NFKC))
 WHERE username_key IS NULL;

-- Look-alike accounts made before this rule ('alice' and 'alice\n') are reported, not merged: the
-- oldest keeps the name; the others lose their key, and with it sign-in by name, until an
-- administrator deletes them (`chatpapers users delete`) or they are given a new name.
DO $$
DECLARE r record;
BEGIN
  FOR r IN
    SELECT user_id, username, username_key FROM (
      SELECT user_id, username, username_key,
             row_number() OVER (PARTITION BY username_key ORDER BY created_at, user_id) AS nth
        FROM users) ranked
     WHERE nth > 1
  LOOP
    RAISE WARNING 'account % (%) has the same name as an older account once control characters and case are ignored; it cannot sign in until renamed or deleted',
      quote_literal(r.username), r.user_id;
    UPDATE users SET username_key = NULL WHERE user_id = r.user_id;
  END LOOP;
END $$;

DROP INDEX IF EXISTS users_username_idx;
CREATE UNIQUE INDEX IF NOT EXISTS users_username_key_idx ON users (username_key);

-- Failed sign-ins, so that a lockout outlives a restart of the server (the in-memory limiter
-- stays the exact one under concurrency; this one is what a restart does not forget).
CREATE TABLE IF NOT EXISTS sign_in_failures (
    key  text NOT NULL,          -- 'account:<username_key>' or 'address:<ip>'
    at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS sign_in_failures_key_at_idx ON sign_in_failures (key, at);
