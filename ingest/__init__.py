"""Ingest: arXiv API / local PDFs -> text -> ordered chunks -> MiniLM vectors -> the corpus store."""
