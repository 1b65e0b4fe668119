"""People answer the verifier's oracle queries in a browser, one local step at a time (extra ``judge``).

:class:`Store` keeps judges, tasks and answers (SQLite in WAL mode, or PostgreSQL); :class:`People` is the oracle that
turns each verifier query into a task and awaits its answers; ``debatekit.judge.server`` serves
the pages (FastAPI, Jinja2) and needs the extra.
"""

from debatekit.judge.people import People
from debatekit.judge.store import Store

__all__ = ["People", "Store"]
