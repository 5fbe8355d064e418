"""The venue's pages make pictures for docs/venue.md the way the other pages make theirs."""

from web.conftest import docs_shot  # noqa: F401 -- the fixture, shared
