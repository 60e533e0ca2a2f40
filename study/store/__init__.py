"""Storage: the study database (SQLite or PostgreSQL through SQLAlchemy Core)."""

from study.store.db import create_tables
from study.store.engine import make_engine, reading, writing

__all__ = ["create_tables", "make_engine", "reading", "writing"]
