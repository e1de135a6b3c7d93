"""The ground floor: the settings tree, terminal helpers and the version. Every package may import
it; it imports none of ours."""

from importlib.metadata import PackageNotFoundError, version

# The version lives in pyproject.toml only; the installed package's metadata carries it here (and
# to `chatpapers --version`, /health, the API docs and the arXiv User-Agent).
try:
    __version__ = version("chatpapers")
except PackageNotFoundError:  # a source tree used without `pip install -e .`
    __version__ = "0+unknown"
