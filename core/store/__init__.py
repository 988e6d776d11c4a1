"""The database: documents, gist memories, trees, runs and their steps, every model call,
evaluations and labels (``store.py``), its schema history (``migrations.py``) and a run's
lifecycle (``runs.py``)."""
from core.store.store import Store, loads, open_db

__all__ = ["Store", "loads", "open_db"]
