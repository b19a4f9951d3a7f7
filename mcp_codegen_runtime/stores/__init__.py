"""State that outlives one request, behind interfaces.

Each kind of state has a store interface and an in-memory store, the
embedded default; durable stores (SQLite for one host, Redis for several
instances) implement the same interface. Today: tasks (`tasks.py`) and
the events of resumable SSE streams (`events.py`).
"""
