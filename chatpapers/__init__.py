"""chatpapers: chat with the arXiv computer-science literature. This package is the roof: the
`chatpapers` command and the composition root that builds the services from the settings."""

from ground import __version__

__all__ = ["__version__"]
