"""Evaluation results, the gist memories they read, and annotators' labels."""
from __future__ import annotations

from core.store.base import Tables, dumps
from core.store.migrations import now
from core.store.records import EvalResult, Label, MemoryRead
from core.trace import FALLBACK


class Evaluations(Tables):
    def add_eval_result(self, **fields) -> int:
        """Store one result (replacing the result of the same question, method and run)."""
        fields = {k: dumps(v) if isinstance(v, (list, dict, tuple)) else v for k, v in fields.items()}
        with self.lock, self.db.conn:
            return self.db["eval_results"].insert({**fields, "created_at": now()}, replace=True).last_pk

    def eval_results(self, eval_id: int) -> list[EvalResult]:
        with self.lock:
            rows = list(self.db["eval_results"].rows_where("eval_id = ?", [eval_id], order_by="id"))
        return [EvalResult.from_row(r) for r in rows]

    def eval_results_version(self, eval_id: int) -> tuple[int, int]:
        """(count, last id) of an evaluation's results: changes whenever a result is added or
        replaced, so a screen can keep the results it loaded until then."""
        with self.lock:
            row = self.db.execute("select count(*), coalesce(max(id), 0) from eval_results where eval_id = ?",
                                  [eval_id]).fetchone()
        return int(row[0]), int(row[1])

    def eval_memories(self, eval_id: int) -> list[MemoryRead]:
        """The gist memories an evaluation's answers read, one per method and memory, with the pause
        points and gists in them that a fallback made."""
        with self.lock:
            rows = list(self.db.query(
                "with used as (select distinct e.method, r.memory_id from eval_results e join runs r "
                "on r.id = e.ask_run_id where e.eval_id = ? and r.memory_id is not null) "
                "select used.method, used.memory_id, m.doc_id, count(p.start) as pages, "
                "coalesce(sum(p.break_by = ?), 0) as fallback_breaks, coalesce(sum(p.gist_by = ?), 0) as fallback_gists "
                "from used join memories m on m.id = used.memory_id left join pages p on p.memory_id = used.memory_id "
                "group by used.method, used.memory_id order by used.method, used.memory_id",
                [eval_id, FALLBACK, FALLBACK]))
        return [MemoryRead.from_row(r) for r in rows]

    # -- labels ------------------------------------------------------------------------------------
    def save_label(self, result_id: int, annotator: str, category: str, note: str) -> None:
        """One label per result and annotator; saving again replaces it."""
        row = {"result_id": result_id, "annotator": annotator, "category": category, "note": note,
               "updated_at": now()}
        with self.lock, self.db.conn:
            existing = list(self.db["labels"].rows_where("result_id = ? and annotator = ?", [result_id, annotator]))
            if existing:
                self.db["labels"].update(existing[0]["id"], row)
            else:
                self.db["labels"].insert(row)

    def labels(self, eval_id: int) -> list[Label]:
        with self.lock:
            rows = list(self.db.query(
                "select l.* from labels l join eval_results r on r.id = l.result_id where r.eval_id = ? "
                "order by l.result_id, l.annotator", [eval_id]))
        return [Label.from_row(r) for r in rows]

    def labelled_results(self, eval_id: int) -> list[tuple[EvalResult, Label]]:
        """Every label of an evaluation with its result (one pair per result and annotator)."""
        with self.lock:
            rows = list(self.db.query(
                "select r.*, l.id as label_id, l.annotator as label_annotator, l.category as label_category, "
                "l.note as label_note, l.updated_at as label_updated_at from labels l join eval_results r "
                "on r.id = l.result_id where r.eval_id = ? order by l.result_id, l.annotator", [eval_id]))
        return [(EvalResult.from_row(row), Label.from_row({"id": row["label_id"], "result_id": row["id"],
                                                            **{k[len("label_"):]: row[k] for k in row
                                                               if k.startswith("label_") and k != "label_id"}}))
                for row in rows]
