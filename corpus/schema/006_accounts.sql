-- Web accounts and their sessions. `chats.owner` holds users.user_id as text (or 'local' for the
-- terminal and for single-user mode), so renaming an account never orphans chats.
CREATE TABLE users (
    user_id        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    username       text NOT NULL,
    password_hash  text NOT NULL,   -- argon2id, parameters inside the hash
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_username_idx ON users (lower(username));

-- Only a hash of the session token is stored: a leaked table does not log anybody in.
CREATE TABLE sessions (
    token_hash   bytea PRIMARY KEY,
    user_id      uuid NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    csrf_token   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX sessions_user_idx ON sessions (user_id);
