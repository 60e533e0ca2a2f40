"""Storage: the study database (SQLite or PostgreSQL through SQLAlchemy Core)."""

from study.store.db import create_tables
from study.store.engine import make_engine, reading, writing
# Tables other packages own, declared on the same metadata so create_tables makes them.
from study.store import judging as _judging_tables  # noqa: F401,E402
from study.store import mturk as _mturk_tables  # noqa: F401,E402
from study.store import prolific as _prolific_tables  # noqa: F401,E402

__all__ = ["create_tables", "make_engine", "reading", "writing"]
