"""MemWalker memory trees and their nodes."""
from __future__ import annotations

from typing import Iterable

from core.errors import NotFound
from core.status import COMPLETE
from core.store.base import Tables, dumps
from core.store.migrations import now
from core.store.records import Tree, TreeNode


class Trees(Tables):
    def find_tree(self, doc_id: str, settings_key: str) -> Tree | None:
        """The newest complete tree of ``doc_id`` made with ``settings_key``."""
        with self.lock:
            rows = list(self.db["trees"].rows_where("doc_id = ? and settings_key = ? and status = ?",
                                                    [doc_id, settings_key, COMPLETE], order_by="id desc", limit=1))
        return Tree.from_row(rows[0]) if rows else None

    def trees_for(self, doc_id: str) -> list[Tree]:
        """A document's complete trees, newest first."""
        with self.lock:
            rows = list(self.db["trees"].rows_where("doc_id = ? and status = ?", [doc_id, COMPLETE],
                                                    order_by="id desc"))
        return [Tree.from_row(r) for r in rows]

    def get_tree(self, tree_id: int) -> Tree:
        return Tree.from_row(self.row("trees", tree_id, NotFound(
            f"No memory tree {tree_id}.", cli="Build one with `python -m core tree DOC_ID`.",
            app="Build one on the Memory tree page.")))

    def create_tree(self, **fields) -> int:
        self.require_writable()
        with self.lock, self.db.conn:
            return self.db["trees"].insert({**fields, "created_at": now()}).last_pk

    def update_tree(self, tree_id: int, **fields) -> None:
        with self.lock, self.db.conn:
            self.db["trees"].update(tree_id, fields)

    def finish_tree(self, tree_id: int, tree_nodes: Iterable[TreeNode], **fields) -> None:
        """Store every node and mark the tree complete, in one transaction."""
        with self.lock, self.db.conn:
            self.db["tree_nodes"].delete_where("tree_id = ?", [tree_id])
            self.db["tree_nodes"].insert_all(
                {"tree_id": tree_id, "node": n.id, "level": n.level, "idx": n.index, "parent": n.parent,
                 "children": dumps(list(n.children)), "start": n.start, "end": n.end, "text": n.text or None,
                 "tokens": n.tokens, "summary": n.summary, "summary_tokens": n.summary_tokens,
                 "summary_by": n.summary_by} for n in tree_nodes)
            self.db["trees"].update(tree_id, {**fields, "status": COMPLETE, "finished_at": now()})

    def tree_nodes(self, tree_id: int) -> tuple[TreeNode, ...]:
        """A tree's nodes, by id (leaves first, the root last)."""
        with self.lock:
            rows = list(self.db["tree_nodes"].rows_where("tree_id = ?", [tree_id], order_by="node"))
        return tuple(TreeNode.from_row(r) for r in rows)
