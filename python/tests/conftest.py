"""Tests run from the repository root or python/: paths to the repository's files."""

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _at_repository_root(monkeypatch):
    # suite files and `target/criterion` are named relative to the repository, as for the CLI
    monkeypatch.chdir(ROOT)
    yield


@pytest.fixture
def root():
    return ROOT
