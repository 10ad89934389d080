"""gpuscope's version, in one place: the package face, pyproject.toml (setuptools reads the
attribute) and every file gpuscope writes take it from here."""

__version__ = "0.1.0"
