"""Gist Memory Explorer: read a long text the way ReadAgent does, and see every step."""
import sys

import streamlit as st

from components.settings import render_settings
from components.state import get_store
from components.urlstate import publish, restore
from components.ui import bring_into_view, inject_css

# Background work (a build, an evaluation) runs on threads of this process: hand the interpreter to the
# server's event loop every millisecond (Python's default is 5 ms), so what a script draws reaches the
# browser while a fast offline build is busy (it delayed the first pause point by ~0.9 s).
sys.setswitchinterval(0.001)

st.set_page_config(page_title="Gist Memory Explorer", page_icon="📖", layout="wide")

PAGES = [
    st.Page("pages/read.py", title="Read", icon=":material/menu_book:", default=True),
    st.Page("pages/memory.py", title="Gist memory", icon=":material/notes:"),
    st.Page("pages/ask.py", title="Ask", icon=":material/quiz:"),
    st.Page("pages/tree.py", title="Memory tree", icon=":material/account_tree:"),
    st.Page("pages/evaluate.py", title="Evaluate", icon=":material/analytics:"),
    st.Page("pages/inspect.py", title="Inspect", icon=":material/rule:"),
    st.Page("pages/runs.py", title="Runs", icon=":material/history:"),
]
# The page list is drawn here, not by Streamlit: its own list (turned off in .streamlit/config.toml) shows
# the pages/ folder's file names ("app, ask, evaluate...") until this script has run once.
navigation = st.navigation(PAGES, position="hidden")
with st.sidebar.container(key="gme_nav", gap=None):
    for page in PAGES:
        st.page_link(page, width="stretch")
    st.divider()
inject_css()
render_settings()
restore(get_store())
try:
    navigation.run()
finally:  # also when a page stops early: the URL names what is open, and what was asked for is in view
    publish()
    bring_into_view()
