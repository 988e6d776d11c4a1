"""Read: open a text, build its gist memory and watch pause points and gists appear."""
import streamlit as st

from components.entry import through_app
from components.fit_view import render_fit
from components.timeline_view import build_actuals, estimate_table, price_inputs, render_build_timeline
from components.pages_view import pages_chart, render_pages
from components.state import (choose_memory, current_document, current_engine, document_token, engine_settings,
                              get_store, open_document, set_memory)
from components.urlstate import from_url, publish
from components.ui import error_text, legend, md, model_name, who
from core.methods.readagent.build import BuildSettings, start_build
from core.text.documents import load_bytes
from core.text.encodings import ENCODINGS
from core.errors import GistError
from core.jobs import get_job
from core.status import COMPLETE, DONE, FAILED, RUNNING, STOPPED, UNFINISHED
from core.methods.readagent.estimate import estimate_build
from core.methods.readagent.memory import with_pages
from core.methods.readagent.presets import PRESETS, choose_preset
from core.samples import SAMPLES, open_sample

through_app()

UPLOAD_TYPES = ["txt", "md", "markdown", "html", "htm", "epub", "pdf"]
SETTING_LABELS = {"min_words": "Min words", "max_words": "Max words", "preset": "Preset"}

# This page's session state: the build it started, with the document it belongs to ({"job": id,
# "doc": document_token()}), the upload already read, and the defaults of the settings read
# outside their widgets.
STATE = {"read_job": None, "read_uploaded": None, "read_preset": "auto", "read_hard_breaks": True,
         "read_concurrency": 8}


def init_state() -> None:
    for key, value in STATE.items():
        st.session_state.setdefault(key, value)


init_state()
linked_page = from_url("page")  # a link to a page of the book: gone to once the memory is on screen

store = get_store()
st.title("Gist Memory Explorer")
st.caption("Read a long text the way ReadAgent does: split it into pages at natural pause points, "
           "write a short gist of each page, then look pages up again to answer questions.")


def start(document, settings: BuildSettings, wait: float = 0.0) -> None:
    """Start building (a callback of the Build button, or an upload's own run). ``wait``: how long
    to wait for the first pause point, so that it is drawn with this run rather than the next tick."""
    init_state()  # a callback: a settings widget left off the last run has taken its key with it
    try:
        engine = current_engine(store)
    except GistError as exc:
        st.error(error_text(exc, SETTING_LABELS))
        return
    job = start_build(store, document, engine, settings, concurrency=st.session_state.read_concurrency)
    st.session_state.read_job = {"job": job.id, "doc": document_token()}
    set_memory(None)
    if wait:
        job.progress.wait_first_page(job, wait)


def settings_for(document) -> BuildSettings:
    preset = choose_preset(st.session_state.read_preset, document.words)
    if st.session_state.get("read_custom_words"):  # the min/max widgets exist only then
        preset = preset.with_words(st.session_state.get("read_min_words"), st.session_state.get("read_max_words"))
    conditional = st.session_state.get("read_question", "").strip() if st.session_state.get("read_conditional") else ""
    return BuildSettings(preset, hard_breaks=st.session_state.read_hard_breaks, conditional=conditional)


def auto_build(document) -> None:
    """The offline engine costs nothing, so a new document starts building at once."""
    if engine_settings().kind == "offline":
        start(document, settings_for(document), wait=0.5)


def open_upload(upload, *, rerun: bool = True, **read_as) -> None:
    """Read the uploaded file (``read_as``: another encoding, another book of the file), open it
    and start its offline build; a file that cannot be read says why and changes nothing."""
    try:
        document = load_bytes(upload.getvalue(), upload.name, **read_as)
    except GistError as exc:
        st.error(error_text(exc))
        return
    store.save_document(document)
    open_document(document)
    auto_build(document)
    if rerun:
        st.rerun()


# --- choosing a text -------------------------------------------------------------------------
upload_tab, sample_tab, library_tab = st.tabs(["Upload a file", "Bundled samples", "Library"])
with upload_tab:
    upload = st.file_uploader("A book or long text: .txt, .md, .html, .epub or .pdf", type=UPLOAD_TYPES,
                              key="read_upload")
    if upload is not None and st.session_state.read_uploaded != upload.file_id:
        st.session_state.read_uploaded = upload.file_id
        with st.spinner(f"Reading {upload.name}…"):  # in view at once, where the file was dropped
            open_upload(upload, rerun=False)
    if upload is not None and (current := current_document(store)) is not None and \
            current.meta.get("encoding") and current.source == upload.name:
        # No byte-order mark and not UTF-8: say which encoding was used, and let the reader choose another.
        names = list(ENCODINGS)
        used = current.meta["encoding"]
        st.info(f"This file is not UTF-8; it was read as {ENCODINGS.get(used, used)}. If letters look wrong "
                "(ŕ for à, Ã© for é), choose the encoding it was saved in.")
        chosen = st.selectbox("Read the file as", names, index=names.index(used) if used in names else None,
                              format_func=ENCODINGS.get, key="read_encoding")
        if chosen and chosen != used:
            open_upload(upload, encoding=chosen)
    if upload is not None and (current := current_document(store)) is not None and \
            len(current.meta.get("books") or []) > 1 and current.source == upload.name:
        # A file holding several books: never cut silently.
        books = current.meta["books"]
        st.info(f"This file holds {len(books)} books; this is book {current.meta['book'] + 1}, "
                f"{md(books[current.meta['book']])}. Open another:")
        other = st.selectbox("Book in this file", range(len(books)), index=current.meta["book"],
                             format_func=lambda i: f"{i + 1}. {books[i]}", key="read_book")
        if other != current.meta["book"] and st.button("Open this book", key="read_open_book"):
            open_upload(upload, encoding=current.meta.get("encoding"), book=other)
with sample_tab:
    key = st.selectbox("Sample", list(SAMPLES), format_func=lambda k: SAMPLES[k].title, key="read_sample")
    st.caption(SAMPLES[key].description)
    if st.button("Open sample", key="read_open_sample"):
        document, memory_id = open_sample(store, key)
        open_document(document, memory_id)
        if memory_id is None:
            auto_build(document)
with library_tab:
    documents = store.list_documents()
    if not documents:
        st.caption("Documents you open are kept here.")
    else:
        ids = [d.id for d in documents]
        labels = {d.id: f"{d.title} · {d.words:,} words · {d.memories} gist memor{'y' if d.memories == 1 else 'ies'}"
                  for d in documents}
        chosen = st.selectbox("Document", ids, format_func=labels.get, key="read_library_doc")
        if st.button("Open", key="read_open_library"):
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
    c1.selectbox("Preset (the paper's Table 8)", ["auto", *PRESETS], key="read_preset",
                 format_func=lambda n: "auto (by length)" if n == "auto" else
                 f"{PRESETS[n].label}: {PRESETS[n].min_words}–{PRESETS[n].max_words} words")
    base = choose_preset(st.session_state.read_preset, document.words)
    custom = c1.checkbox("Custom min/max words", key="read_custom_words")
    if custom:
        c2.number_input("Min words", 50, 20000, base.min_words, step=50, key="read_min_words")
        c3.number_input("Max words", 100, 40000, base.max_words, step=50, key="read_max_words")
    else:  # the preset's values, shown but not editable
        c2.number_input("Min words", value=base.min_words, disabled=True, key=f"read_min_words_{base.name}")
        c3.number_input("Max words", value=base.max_words, disabled=True, key=f"read_max_words_{base.name}")
    c1.checkbox("Chapter headings end pages", key="read_hard_breaks")
    c1.checkbox("Gist with a question known (Conditional ReadAgent, App. G.1)", key="read_conditional",
                help="Stored as its own memory, beside the unconditional one, so both can be compared.")
    if st.session_state.get("read_conditional"):
        c2.text_input("Question known while gisting", key="read_question")
    if engine_settings().kind == "openai":
        c2.number_input("Concurrent model calls", 1, 64, key="read_concurrency")

try:
    settings = settings_for(document)
except GistError as exc:  # page sizes that cannot work
    st.error(error_text(exc, SETTING_LABELS))
    st.stop()

held = st.session_state.read_job
job = get_job(held["job"]) if held and held["doc"] == document_token() else None
if job is not None and (job.kind != "build" or job.progress.document.id != document.id):
    job = None
running = job is not None and job.status == RUNNING
# A fast build (the offline engine reads Pride and Prejudice in well under a second) is still shown page by
# page, as it would be read: pages are revealed a few a tick until every page the build decided is on screen.
revealing = job is not None and job.status == DONE and held.get("shown", 0) < len(job.progress.pages())
if job is not None and job.finished and not revealing and not held.get("followed"):
    # Once, when a build ends: choose what it made (the memory, or what a stopped build kept) and
    # rerun, so everything drawn above it (the Library's counts) is drawn again with it.
    held["followed"] = True
    kept = store.find_memory(document.id, job.progress.key, statuses=UNFINISHED) if job.status != DONE else None
    set_memory(job.result.memory_id if job.status == DONE else kept.id if kept else None)
    st.rerun()


def stop_build() -> None:
    job.stop()
    job.wait(15)


if engine_settings().kind != "offline":
    with st.expander("Estimate of a model build: calls, tokens and cost", expanded=False):
        st.caption("From the text's length and the preset's page sizes: a page holds between min and max words "
                   "(expected: the midpoint), one pagination call per page but the last, one gist call per page. "
                   "The range of pages is the paper's bound, every page max words long to every page min.")
        input_price, output_price = price_inputs("read_estimate")
        st.dataframe(estimate_table(estimate_build(document.words, settings.preset), input_price=input_price,
                                    output_price=output_price), hide_index=True, key="read_estimate_table")

buttons = st.container(horizontal=True)  # each button as wide as its label: never cut at 1280 px
label = "Resume build" if job is not None and job.status in (STOPPED, FAILED) else "Build gist memory"
buttons.button(label, type="primary", disabled=running, key="read_build", on_click=start, args=(document, settings))
if running:
    buttons.button("Stop", key="read_stop", on_click=stop_build)
st.caption(f"Engine: {md(engine_settings().label)} · preset {settings.preset.name} "
           f"({settings.preset.min_words}–{settings.preset.max_words} words)")


REVEAL_TICK_S = 0.3  # how often the pages being read are drawn again
REVEAL_TICKS = 12  # a build that is already done is shown within this many ticks (about 3.6 s), however long


@st.fragment(run_every=REVEAL_TICK_S)
def live_build(job_id: int) -> None:
    """Pause points and gists as they are decided, a few pages a tick however fast the engine is (the
    newest pages, each page's opening); reruns the page when every page is on screen and the build ended."""
    job = get_job(job_id)
    progress = job.progress
    found = progress.pages()
    held = st.session_state.read_job
    expected = max(len(found), round(progress.document.words / ((settings.preset.min_words + settings.preset.max_words) / 2)))
    step = len(found) if job.status not in (RUNNING, DONE) else max(1, -(-expected // REVEAL_TICKS))
    shown = min(len(found), held.get("shown", 0) + step)
    held["shown"] = shown
    pages = found[:shown]
    words, total = sum(p.words for p in pages), max(1, progress.document.words)
    gisted = sum(1 for p in pages if p.gist)
    st.progress(min(1.0, words / total),
                text=f"{len(pages)} pages found · {gisted} gisted · {words:,} of {progress.document.words:,} words · "
                     f"{job.seconds:.1f} s")
    if not pages:
        st.caption("Reading the start of the text to choose the first pause point…")
    render_pages(pages, key="read_live_pages", by=model_name(progress.engine_label), follow=True)
    if job.finished and shown >= len(found):
        if job.status == DONE:
            set_memory(job.result.memory_id)
        st.rerun()


if running or revealing:
    legend()
    live_build(job.id)
    st.stop()
if job is not None and job.status in (STOPPED, FAILED):
    st.warning(f"{error_text(job.exception, SETTING_LABELS)} {len(job.progress.pages())} pages and {job.progress.pages_gisted} "
               f"gist{'' if job.progress.pages_gisted == 1 else 's'} are kept.")

# --- the memory: finished, or what a stopped build kept ----------------------------------------
stored = choose_memory(store, document, key="read_memory", partial=True)
if stored is None:
    if job is not None and job.progress.pages():
        st.subheader(f"Unfinished: {len(job.progress.pages())} pages so far")
        render_pages(job.progress.pages(), key="read_partial_pages", by=model_name(job.progress.engine_label),
                     pending=f"no gist yet: press {label}")
    else:
        st.info(f"No gist memory yet. Press **{label}** to paginate and gist this text.")
    st.stop()

memory = with_pages(store, stored, document)
pages = memory.pages
if stored.status != COMPLETE:
    ours = job is not None and job.progress.key == stored.settings_key and job.status in (STOPPED, FAILED)
    how = f"Press **{label}** above to finish it" if ours else \
        f"Resume it on the **Runs** page (run #{stored.run_id})"
    st.subheader(f"Stopped, partial: {len(pages)} pages so far")
    st.warning(f"This gist memory is {stored.status} before the end of the text: {len(pages)} pages, "
               f"{sum(1 for p in pages if p.gist)} with a gist. {how}; what was made is kept and reused. "
               "Questions are asked of finished memories only.")
    render_pages(pages, key="read_partial_pages", by=model_name(memory.engine_label),
                 pending="no gist yet: the build stopped before it")
    st.stop()

m1, m2, m3, m4 = st.columns(4)
m1.metric("Pages", len(memory.pages))
m2.metric("Gist words", f"{memory.gist_words:,}")
m3.metric("Compression rate", f"{memory.compression_rate:.1f}%")
m4.metric("Fallback breaks", sum(1 for p in memory.pages if p.break_by == "fallback"))
by = model_name(memory.engine_label)
st.caption(f"Pause points {md(who(memory.pages[0].break_by, by))} · gists by {md(memory.engine_label)}")
try:
    chosen = current_engine(store)
except GistError:
    chosen = None
render_fit(memory, chosen.context_tokens if chosen else None, chosen.model if chosen else None,
           chosen.label if chosen else "")
if stored.run_id:
    with st.expander("How this memory was built: model calls over time, estimate and actual cost"):
        render_build_timeline(store, stored.run_id, key="read_build")
        if memory.engine != "offline":
            preset = choose_preset(memory.preset or "auto", document.words).with_words(stored.min_words,
                                                                                      stored.max_words)
            st.markdown("**Estimate before the build, and what it took** (cost at the prices given in the "
                        "estimate above)")
            input_price = st.session_state.get("read_estimate_input_price")
            output_price = st.session_state.get("read_estimate_output_price")
            st.dataframe(estimate_table(estimate_build(document.words, preset), input_price=input_price,
                                        output_price=output_price, actual=build_actuals(store, stored.run_id)),
                         hide_index=True, key="read_actual_table")
st.plotly_chart(pages_chart(pages, document.words), width="stretch", key="read_pages_chart")
legend()
shown = render_pages(pages, key="read_memory_pages", by=by,
                     linked=int(linked_page) if (linked_page or "").isdigit() else None)
publish(page=shown)
