-- Conversations with the agent. `owner` is a user id of the web app, or 'local' for the terminal
-- and single-user mode. `allowed_papers` holds every paper a tool returned in the chat: the only
-- papers an answer may cite.
CREATE TABLE chats (
    chat_id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner           text NOT NULL,
    title           text NOT NULL DEFAULT 'New chat',
    level           text CHECK (level IN ('BSc', 'MSc', 'PhD')),
    allowed_papers  text[] NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chats_owner_idx ON chats (owner, updated_at DESC);

CREATE TABLE messages (
    message_id   bigserial PRIMARY KEY,
    chat_id      uuid NOT NULL REFERENCES chats (chat_id) ON DELETE CASCADE,
    role         text NOT NULL CHECK (role IN ('user', 'assistant')),
    content      text NOT NULL,
    level        text,
    steps        jsonb NOT NULL DEFAULT '[]',   -- thought, tool, arguments, observation digest, duration
    citations    text[] NOT NULL DEFAULT '{}',
    tokens_in    integer,
    tokens_out   integer,
    model        text,
    forced       boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX messages_chat_idx ON messages (chat_id, message_id);
