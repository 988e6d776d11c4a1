"""Every model call (the log the replay cache reads) and embedding vectors."""
from __future__ import annotations

import array
import sys
from typing import Iterable

from core.store.base import Tables, dumps
from core.store.migrations import now
from core.store.records import LlmCall


class Calls(Tables):
    def cached_reply(self, cache_key: str) -> LlmCall | None:
        """The first reply logged for ``cache_key`` that was not an error and not rejected."""
        with self.lock:
            rows = list(self.db["llm_calls"].rows_where(
                "cache_key = ? and cached = 0 and error is null and rejected is null", [cache_key],
                order_by="id", limit=1,
            ))
        return LlmCall.from_row(rows[0]) if rows else None

    def reject_call(self, call_id: int) -> None:
        """Mark a logged reply unusable, and the reply it replayed if it was a replay, so the
        replay cache never serves it again; the row stays in the log."""
        with self.lock, self.db.conn:
            self.db.execute(
                "update llm_calls set rejected = 1 where id = ? or (cached = 0 and rejected is null and "
                "cache_key = (select cache_key from llm_calls where id = ?) and "
                "reply is (select reply from llm_calls where id = ?))", [call_id, call_id, call_id])

    def log_call(self, **fields) -> int:
        for key in ("params", "backend"):
            if key in fields and not isinstance(fields[key], str):
                fields[key] = dumps(fields[key])
        with self.lock, self.db.conn:
            return self.db["llm_calls"].insert({**fields, "created_at": now()}).last_pk

    def calls(self, run_id: int | None = None, ids: Iterable[int] | None = None) -> list[LlmCall]:
        """The calls with ``ids``, else those logged under ``run_id`` (``None``: under no run), in order."""
        with self.lock:
            if ids is not None:
                ids = list(ids)
                if not ids:
                    return []
                rows = self.db["llm_calls"].rows_where(f"id in ({','.join('?' * len(ids))})", ids, order_by="id")
            else:
                rows = self.db["llm_calls"].rows_where("run_id is ?", [run_id], order_by="id")
            return [LlmCall.from_row(r) for r in rows]

    # -- embeddings -----------------------------------------------------------------------------------
    def cached_embeddings(self, keys: Iterable[str]) -> dict[str, list[float]]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, list[float]] = {}
        with self.lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                for row in self.db["embeddings"].rows_where(f"key in ({','.join('?' * len(chunk))})", chunk):
                    vector = array.array("f")
                    vector.frombytes(row["vector"])
                    if sys.byteorder != "little":
                        vector.byteswap()
                    found[row["key"]] = vector.tolist()
        return found

    def save_embeddings(self, rows: Iterable[tuple[str, list[float]]], *, model: str, backend: dict) -> None:
        stamp, where = now(), dumps(backend)
        records = []
        for key, vector in rows:
            packed = array.array("f", vector)
            if sys.byteorder != "little":
                packed.byteswap()
            records.append({"key": key, "model": model, "backend": where, "dims": len(vector),
                            "vector": packed.tobytes(), "created_at": stamp})
        with self.lock, self.db.conn:
            self.db["embeddings"].upsert_all(records, pk="key")
