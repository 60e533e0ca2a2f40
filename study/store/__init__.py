"""Storage: the study database (SQLite or PostgreSQL through SQLAlchemy Core)."""

from study.store.schema import create_tables
from study.store.engine import make_engine
from study.store.transactions import reading, writing
# Every module that declares tables on study.store.db's metadata, imported here so that
# create_tables and `study copy-database` find them all whichever module a command imported
# first. Keep this order: it keeps metadata.tables in the order it had when study.store.db declared
# every table (the participant path's, then each area's). create_tables and copy-database walk
# metadata.sorted_tables, which is by name; copy-database also hands metadata.tables to PostgreSQL.
from study.store import review_tables as _review_tables  # noqa: F401,E402
from study.store import surveys as _survey_tables  # noqa: F401,E402
from study.store import chat_tables as _chat_tables  # noqa: F401,E402
from study.store import simulated as _simulated_tables  # noqa: F401,E402
from study.store import activity as _activity_tables  # noqa: F401,E402
from study.store import judging as _judging_tables  # noqa: F401,E402
from study.store import mturk as _mturk_tables  # noqa: F401,E402
from study.store import prolific as _prolific_tables  # noqa: F401,E402
from study.store import withdrawals as _withdrawal_tables  # noqa: F401,E402

__all__ = ["create_tables", "make_engine", "reading", "writing"]
