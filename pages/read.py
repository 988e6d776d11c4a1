"""Read: open a text, build its gist memory and watch pause points and gists appear."""
import streamlit as st

from components.pages_view import memory_pages, pages_chart, render_pages
from components.state import (choose_memory, current_document, current_engine, engine_settings, get_store,
                              open_document)
from components.ui import legend, md, model_name, who
from core.build import BuildSettings
from core.documents import load_bytes
from core.errors import GistError
from core.jobs import DONE, FAILED, RUNNING, STOPPED, get_job, start_build
from core.memory import load_memory
from core.presets import PRESETS, choose_preset
from core.samples import SAMPLES, open_sample

UPLOAD_TYPES = ["txt", "md", "markdown", "html", "htm", "epub", "pdf"]

store = get_store()
st.title("Gist Memory Explorer")
st.caption("Read a long text the way ReadAgent does: split it into pages at natural pause points, "
           "write a short gist of each page, then look pages up again to answer questions.")


def start(document, settings: BuildSettings) -> None:
    try:
        engine = current_engine(store)
    except GistError as exc:
        st.error(str(exc))
        return
    job = start_build(store, document, engine, settings, concurrency=st.session_state.get("concurrency", 8))
    st.session_state.job_id = job.id
    st.session_state.pop("memory_id", None)
    job.wait_first_page(2.0)  # so the first pause point is on screen with this run, not the next tick


def settings_for(document) -> BuildSettings:
    name = st.session_state.get("preset", "auto")
    preset = choose_preset(name, document.words)
    if st.session_state.get("custom_words"):
        preset = preset.with_words(st.session_state.get("min_words"), st.session_state.get("max_words"))
    return BuildSettings(preset, hard_breaks=st.session_state.get("hard_breaks", True))


def auto_build(document) -> None:
    """The offline engine costs nothing, so a new document starts building at once."""
    if engine_settings().kind == "offline":
        start(document, settings_for(document))


# --- choosing a text -------------------------------------------------------------------------
upload_tab, sample_tab, library_tab = st.tabs(["Upload a file", "Bundled samples", "Library"])
with upload_tab:
    upload = st.file_uploader("A book or long text: .txt, .md, .html, .epub or .pdf", type=UPLOAD_TYPES,
                              key="upload")
    if upload is not None and st.session_state.get("_uploaded") != upload.file_id:
        st.session_state._uploaded = upload.file_id
        try:
            document = load_bytes(upload.getvalue(), upload.name)
        except GistError as exc:
            st.error(str(exc))
        else:
            store.save_document(document)
            open_document(document)
            auto_build(document)
with sample_tab:
    key = st.selectbox("Sample", list(SAMPLES), format_func=lambda k: SAMPLES[k].title, key="sample")
    st.caption(SAMPLES[key].description)
    if st.button("Open sample", key="open_sample"):
        document, memory_id = open_sample(store, key)
        open_document(document, memory_id)
        if memory_id is None:
            auto_build(document)
with library_tab:
    documents = store.list_documents()
    if not documents:
        st.caption("Documents you open are kept here.")
    else:
        ids = [d["id"] for d in documents]
        labels = {d["id"]: f"{d['title']} · {d['words']:,} words · "
                     f"{d['memories']} gist memor{'y' if d['memories'] == 1 else 'ies'}" for d in documents}
        chosen = st.selectbox("Document", ids, format_func=labels.get, key="library_doc")
        if st.button("Open", key="open_library"):
            open_document(store.get_document(chosen))

document = current_document(store)
if document is None:
    st.info("Upload a text or open a bundled sample to begin. "
            "Try **Off Course**: it comes with the gist memory a real model (PaLM 2-L) wrote in the paper.")
    st.stop()

st.header(md(document.title))
st.caption(" · ".join(md(x) for x in (document.author, f"{document.words:,} words",
                                  f"{len(document.paragraphs):,} paragraphs", f"id {document.id}") if x))

# --- pagination settings and build -----------------------------------------------------------
with st.expander("Pagination settings", expanded=False):
    c1, c2, c3 = st.columns([2, 1, 1])
    c1.selectbox("Preset (the paper's Table 8)", ["auto", *PRESETS], key="preset",
                 format_func=lambda n: "auto (by length)" if n == "auto" else
                 f"{PRESETS[n].label}: {PRESETS[n].min_words}–{PRESETS[n].max_words} words")
    base = choose_preset(st.session_state.get("preset", "auto"), document.words)
    custom = c1.checkbox("Custom min/max words", key="custom_words")
    if custom:
        c2.number_input("Min words", 50, 20000, base.min_words, step=50, key="min_words")
        c3.number_input("Max words", 100, 40000, base.max_words, step=50, key="max_words")
    else:  # the preset's values, shown but not editable
        c2.number_input("Min words", value=base.min_words, disabled=True, key=f"min_words_{base.name}")
        c3.number_input("Max words", value=base.max_words, disabled=True, key=f"max_words_{base.name}")
    c1.checkbox("Chapter headings end pages", True, key="hard_breaks")
    if engine_settings().kind == "openai":
        c2.number_input("Concurrent model calls", 1, 64, 8, key="concurrency")

settings = settings_for(document)
if settings.preset.min_words >= settings.preset.max_words:
    st.error("Min words must be below max words.")
    st.stop()

job = get_job(st.session_state.get("job_id"))
if job is not None and job.document.id != document.id:
    job = None
snap = job.snapshot() if job is not None else None
running = snap is not None and snap.status == RUNNING


def stop_build() -> None:
    job.stop()
    job.wait(15)


b1, b2, _ = st.columns([1, 1, 4])
label = "Resume build" if snap is not None and snap.status in (STOPPED, FAILED) else "Build gist memory"
b1.button(label, type="primary", disabled=running, key="build", on_click=start, args=(document, settings))
if running:
    b2.button("Stop", key="stop", on_click=stop_build)
st.caption(f"Engine: {md(engine_settings().label)} · preset {settings.preset.name} "
           f"({settings.preset.min_words}–{settings.preset.max_words} words)")


@st.fragment(run_every=0.5)
def live_build(job_id: int) -> None:
    """Pause points and gists as they arrive; reruns the page when the build ends."""
    job = get_job(job_id)
    snap = job.snapshot()
    total = max(1, snap.total_words)
    st.progress(min(1.0, snap.words_done / total),
                text=f"{len(snap.pages)} pages found · {snap.pages_gisted} gisted · "
                     f"{snap.words_done:,} of {snap.total_words:,} words · {snap.seconds:.1f} s")
    render_pages(job.document, snap.pages, key="live_pages", by=model_name(job.engine_label), follow=True)
    if snap.finished:
        if snap.status == DONE:
            st.session_state.memory_id = snap.result.memory_id
        st.rerun()


if running:
    legend()
    live_build(job.id)
    st.stop()
if snap is not None and snap.status in (STOPPED, FAILED):
    st.warning(f"{snap.error} {len(snap.pages)} pages and {snap.pages_gisted} gists are kept.")

# --- the finished memory -------------------------------------------------------------------
memories = store.memories_for(document.id)
if not memories:
    if snap is not None and snap.pages:
        st.subheader(f"Unfinished: {len(snap.pages)} pages so far")
        render_pages(document, snap.pages, key="partial_pages", by=model_name(job.engine_label),
                     pending="no gist yet: resume the build")
    else:
        st.info("No gist memory yet. Press **Build gist memory** to paginate and gist this text.")
    st.stop()

memory = load_memory(store, choose_memory(store, document, key="read_memory"), document)
pages = memory_pages(memory)

m1, m2, m3, m4 = st.columns(4)
m1.metric("Pages", len(memory.pages))
m2.metric("Gist words", f"{memory.gist_words:,}")
m3.metric("Compression rate", f"{memory.compression_rate:.1f}%")
m4.metric("Fallback breaks", sum(1 for p in memory.pages if p.break_by == "fallback"))
by = model_name(memory.engine_label)
st.caption(f"Pause points {md(who(memory.pages[0].break_by, by))} · gists by {md(memory.engine_label)}")
st.plotly_chart(pages_chart(pages, document.words), width="stretch", key="pages_chart")
legend()
render_pages(document, pages, key="memory_pages", by=by)
