"""The database: one ``Store`` (``store.py``), in parts by topic (documents, memories and pages,
trees, runs and steps, model calls, evaluations and labels), handing out frozen records
(``records.py``); its schema history (``migrations.py``) and a run's lifecycle (``runs.py``)."""
from core.store.store import Store, open_db

__all__ = ["Store", "open_db"]
