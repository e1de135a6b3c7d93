"""The ground floor: the settings tree, terminal helpers and the version. Every package may import
it; it imports none of ours."""

__version__ = "0.1.0"
