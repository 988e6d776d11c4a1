"""One build per memory at a time: two builds of the same book and settings never write the same memory."""
import random
import re
import threading
import time

from core.engine import model_engine
from core.llm.seam import LLM
from core.methods.readagent.build import BuildSettings, build_memory
from core.methods.readagent.memory import load_memory
from core.methods.readagent.presets import PRESETS
from core.store import open_db
from core.text.documents import load_path
from tests.conftest import book
from tests.fakes import ScriptedBackend

QUALITY = BuildSettings(PRESETS["quality"])


def fickle(seed: int):
    """A model whose page breaks vary from call to call (as a sampled real model's do)."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def reply(prompt: str) -> str:
        time.sleep(0.002)  # long enough for the two builds to overlap
        if "numbered labels" in prompt:
            labels = re.findall(r"^<(\d+)>$", prompt, re.M)
            with lock:
                return f"Break point: <{rng.choice(labels)}>"
        page = prompt.split("Passage:\n", 1)[1]
        return " ".join(page.split()[:12])
    return reply


def test_two_builds_at_once_share_one_memory_and_every_paragraph_is_in_exactly_one_page(tmp_path):
    path = tmp_path / "shared.db"
    document = load_path(book("alice"))
    results, errors = [], []

    stores = [open_db(path) for _ in range(2)]  # a connection each, as two processes or browser tabs have

    def build(seed: int) -> None:
        store = stores[seed - 1]
        try:
            # One engine identity (same model, same server) whose replies differ per session: no shared cache.
            engine = model_engine(LLM(ScriptedBackend(handler=fickle(seed)), store, use_cache=False))
            results.append(build_memory(store, document, engine, QUALITY, concurrency=4))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=build, args=(seed,)) for seed in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    store = open_db(path)
    memories = store.memories_for(document.id, status=None)
    assert len(memories) == 1 and memories[0].status == "complete"
    assert {r.memory_id for r in results} == {memories[0].id}
    assert sorted(r.reused for r in results) == [False, True]  # one built it, the other waited and reused it
    pages = load_memory(store, memories[0].id).pages
    covered = [i for p in pages for i in range(p.start, p.end)]
    assert covered == list(range(len(document.paragraphs)))  # every paragraph in exactly one page
    assert all(p.gist for p in pages)


def test_two_processes_opening_a_new_database_at_once_both_get_it_migrated(tmp_path):
    path = tmp_path / "new.db"
    opened, errors = [], []

    def open_it() -> None:
        try:
            opened.append(open_db(path))
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and len(opened) == 4
    assert opened[0].db["_migrations"].count == opened[3].db["_migrations"].count > 5


def test_a_second_browser_tab_building_the_same_book_attaches_to_the_running_build(store):
    from core.llm.simulator import MODEL, SimulatedLLM
    from core.engine import make_engine
    from core.methods.readagent.build import start_build

    document = load_path(book("alice"))
    with SimulatedLLM(latency_ms=20) as sim:
        def engine():
            return make_engine("openai", store, model=MODEL, base_url=sim.base_url, backoff=0.01)

        first = start_build(store, document, engine(), QUALITY, concurrency=2)
        second = start_build(store, document, engine(), QUALITY, concurrency=2)
        assert second is first
        assert first.wait(120) and first.status == "done"
    assert len(store.memories_for(document.id, status=None)) == 1
