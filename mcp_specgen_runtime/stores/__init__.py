"""State that outlives one request, behind interfaces.

Each kind of state has a store interface and an in-memory store, the
embedded default; durable stores (SQLite for one host, Redis for several
instances) implement the same interface. Today: tasks (`tasks.py`; on
SQLite in `sqlite_tasks.py`, whose orphaned tasks `runners.py` detects; on
Redis in `redis_tasks.py`) and the events of resumable SSE streams
(`events.py`, in memory).
"""
