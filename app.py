"""Gist Memory Explorer: read a long text the way ReadAgent does, and see every step."""
import streamlit as st

from components.settings import render_settings
from components.ui import inject_css

st.set_page_config(page_title="Gist Memory Explorer", page_icon="📖", layout="wide")

navigation = st.navigation([
    st.Page("pages/read.py", title="Read", icon="📖", default=True),
    st.Page("pages/memory.py", title="Gist memory", icon="🗂️"),
    st.Page("pages/ask.py", title="Ask", icon="❓"),
    st.Page("pages/runs.py", title="Runs", icon="🕘"),
])
inject_css()
render_settings()
navigation.run()
