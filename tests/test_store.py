import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

from core.errors import DatabaseError
from core.methods.ask import load_ask
from core.methods.readagent.memory import latest_memory
from core.store import migrations, open_db
from core.text.documents import parse_text

SCHEMAS = sorted((Path(__file__).parent / "data" / "schemas").glob("*.sql"))  # one per shipped schema, oldest first


def test_migrations_apply_once_and_are_recorded():
    database = sqlite_utils.Database(memory=True)
    applied = migrations.migrate(database)
    assert applied == [m.name for m in migrations.MIGRATIONS]
    assert applied[0] == "m001_initial"
    assert migrations.migrate(database) == []  # idempotent
    assert [r["name"] for r in database["_migrations"].rows] == applied
    for table in ("documents", "paragraphs", "memories", "pages", "runs", "steps", "llm_calls"):
        assert table in database.table_names()


def test_migration_names_are_unique_including_the_names_they_shipped_under():
    names = [n for m in migrations.MIGRATIONS for n in (m.name, *m.also_recorded_as)]
    assert len(set(names)) == len(names)


def _columns(db: sqlite_utils.Database) -> dict[str, list[str]]:
    return {t: sorted(c.name for c in db[t].columns) for t in db.table_names() if t != "_migrations"}


@pytest.mark.parametrize("dump", SCHEMAS, ids=[p.stem for p in SCHEMAS])
def test_a_database_made_by_every_shipped_schema_opens_and_keeps_its_data(dump, tmp_path):
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(dump.read_text(encoding="utf-8"))
    before = {t: old.execute(f"select count(*) from [{t}]").fetchone()[0]
              for (t,) in old.execute("select name from sqlite_master where type='table'")}
    old.close()

    store = open_db(path)  # migrates
    fresh = sqlite_utils.Database(memory=True)
    migrations.migrate(fresh)
    assert _columns(store.db) == _columns(fresh)  # the current schema, whatever the starting point
    for table, rows in before.items():
        if table != "_migrations":
            assert store.db[table].count == rows, table  # nothing lost
    document = store.list_documents()[0]
    assert document.title == "Off Course (opening)"
    assert store.get_document(document.id).words == document.words
    if before.get("memories"):
        memory = latest_memory(store, store.get_document(document.id))
        assert memory.pages and all(p.gist for p in memory.pages)
        assert store.list_runs()  # the build and the question it answered are still listed
    for listed in store.list_runs(kind="ask"):  # each question reopens as it was stored
        stored = store.get_run(listed.id).result
        reopened = load_ask(store, listed.id).as_json()
        assert reopened.pop("steps") == [s.trace.to_dict() for s in store.steps(listed.id)]
        details, typed = stored.get("details") or stored.get("extra") or {}, reopened.pop("details")
        assert {k: v for k, v in details.items() if k in typed} == {k: typed[k] for k in details if k in typed}
        assert reopened == {k: v for k, v in stored.items() if k not in ("details", "extra")}
    store.close()


def test_there_is_a_dump_for_every_shipped_schema():
    # m001; +m002; +m004 (as m004); +m003_evaluation; +m003_embeddings; m001-m004; m001-m012 (landed as 9aef759,
    # with a tree, an evaluation and a label in it)
    assert len(SCHEMAS) == 7
    assert "'m012_ask_groups'" in SCHEMAS[-1].read_text(encoding="utf-8")


def test_document_round_trip_and_prefix_lookup(store):
    doc = parse_text("Chapter 1\n\nA first paragraph.\n\nA second one.", title="Tiny")
    store.save_document(doc)
    store.save_document(doc)  # saving twice keeps one copy
    assert store.get_document(doc.id) == doc
    assert store.get_document(doc.id[:5]).id == doc.id
    assert store.list_documents()[0].words == doc.words


def test_database_file_location_comes_from_the_setting(tmp_path, monkeypatch):
    target = tmp_path / "nested" / "here.db"
    monkeypatch.setenv("GIST_MEMORY_DB", str(target))
    store = open_db()
    assert store.path == target and target.exists()
    store.close()


def test_unusable_location_is_a_clear_error_phrased_for_each_front_end(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(DatabaseError) as caught:
        open_db(blocker / "sub" / "x.db")
    assert "--db" in caught.value.for_cli()
    assert "--db" not in caught.value.for_app() and "GIST_MEMORY_DB" in caught.value.for_app()


def _digest(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("schema", [
    "create table documents (id text primary key, body text); insert into documents values ('x', 'y');",  # names clash
    "create table notes (id integer primary key, text text); insert into notes values (1, 'kept');",
])
def test_a_database_that_is_not_ours_is_refused_and_left_byte_for_byte_unchanged(tmp_path, schema):
    path = tmp_path / "theirs.db"
    conn = sqlite3.connect(path)
    conn.executescript(schema)
    conn.close()
    before = _digest(path)
    with pytest.raises(DatabaseError, match="made by another program") as caught:
        open_db(path)
    assert "left unchanged" in str(caught.value) and "--db" in caught.value.for_cli()
    assert _digest(path) == before and sorted(p.name for p in tmp_path.iterdir()) == ["theirs.db"]


def test_a_file_that_is_not_sqlite_is_refused_unchanged(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 50)
    with pytest.raises(DatabaseError, match="not an SQLite file"):
        open_db(path)
    assert path.read_text().startswith("these are my notes")


def test_a_read_only_database_can_be_read_and_says_why_nothing_can_be_built(tmp_path, monkeypatch):
    from core.engine import OFFLINE
    from core.methods.readagent.build import BuildSettings, build_memory
    from core.methods.readagent.presets import PRESETS

    path = tmp_path / "shared.db"
    writable = open_db(path)
    doc = parse_text("Chapter 1\n\n" + "A line of the story. " * 400, title="Kept")
    build_memory(writable, doc, OFFLINE, BuildSettings(PRESETS["quality"]))
    writable.close()
    monkeypatch.setattr("os.access", lambda p, mode: False)  # as for a file this user cannot write
    store = open_db(path)
    assert store.read_only and store.list_documents()[0].title == "Kept"
    assert latest_memory(store, store.get_document(doc.id)).pages  # reading works
    with pytest.raises(DatabaseError, match="read-only, so nothing can be built") as caught:
        build_memory(store, parse_text("Another text. " * 300, title="New"), OFFLINE,
                     BuildSettings(PRESETS["quality"]))
    assert "writable" in caught.value.for_app() and "--db" in caught.value.for_cli()
