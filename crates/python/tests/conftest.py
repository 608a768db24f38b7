"""Fixtures of the talus package's tests: a fresh database directory, an open database."""

import pytest

import talus


@pytest.fixture
def path(tmp_path):
    """A directory for a database (not created yet)."""
    return str(tmp_path / "db")


@pytest.fixture
def db(path):
    """An open database, closed after the test."""
    d = talus.DB(path)
    yield d
    d.close()
