import sqlite_utils

from core import db
from core.documents import parse_text


def test_migrations_apply_once_and_are_recorded():
    database = sqlite_utils.Database(memory=True)
    applied = db.migrate(database)
    assert applied == [m.__name__ for m in db.MIGRATIONS]
    assert applied[0] == "m001_initial"
    assert db.migrate(database) == []  # idempotent
    assert [r["name"] for r in database["_migrations"].rows] == applied
    for table in ("documents", "paragraphs", "memories", "pages", "runs", "steps", "llm_calls"):
        assert table in database.table_names()


def test_migration_names_are_ordered_and_unique():
    names = [m.__name__ for m in db.MIGRATIONS]
    assert names == sorted(names) and len(set(names)) == len(names)
    assert all(n.startswith(f"m{i + 1:03d}_") for i, n in enumerate(names))


def test_document_round_trip_and_prefix_lookup(store):
    doc = parse_text("Chapter 1\n\nA first paragraph.\n\nA second one.", title="Tiny")
    store.save_document(doc)
    store.save_document(doc)  # saving twice keeps one copy
    assert store.get_document(doc.id) == doc
    assert store.get_document(doc.id[:5]).id == doc.id
    assert store.list_documents()[0]["words"] == doc.words


def test_database_file_location_comes_from_the_setting(tmp_path, monkeypatch):
    target = tmp_path / "nested" / "here.db"
    monkeypatch.setenv("GIST_MEMORY_DB", str(target))
    store = db.open_db()
    assert store.path == target and target.exists()
    store.close()


def test_unusable_location_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    try:
        db.open_db(blocker / "sub" / "x.db")
    except db.GistError as exc:
        assert "--db" in str(exc)
    else:
        raise AssertionError("expected an error")
