"""chatpapers: chat with the arXiv computer-science literature."""

__version__ = "0.1.0"
