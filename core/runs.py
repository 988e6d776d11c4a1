"""Reading a stored run back whole: the run, its steps, and the model calls they made."""
from __future__ import annotations

from core.db import Store, loads


def run_trace(store: Store, run_id: int) -> dict:
    """Everything needed to show what happened in a run, exactly as it happened."""
    run = store.get_run(run_id)
    steps = store.steps(run_id)
    calls = {c["id"]: {**c, "params": loads(c["params"], {}), "backend": loads(c["backend"], {})}
             for c in store.calls(run_id=run_id)}
    return {"run": run, "steps": steps, "calls": calls}
