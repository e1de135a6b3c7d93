"""The corpus store shared by ingest, the agent, the API and eval: connection (a DATABASE_URL or the
embedded server), explicit migrations, SQL for papers/chunks and ingest state, arXiv ids and the
MiniLM embedder. Nothing here touches the network, the DB or the model at import time."""
