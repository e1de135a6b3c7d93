"""Keeping up: each user's interests (topics, ratings, the papers their chats cited) and a personal
ranker over each night's new papers. Uses corpus/ (its SQL lives there) and no agent; the API, the
CLI and the end of an ingest run call it."""
