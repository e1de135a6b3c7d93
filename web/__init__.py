"""The chat page: static files served by api/ (no build step)."""
