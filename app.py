"""Gist Memory Explorer: read a long text the way ReadAgent does, and see every step."""
import streamlit as st

from components.documents import render_documents
from core.db import open_db
from core.offline import LABEL as OFFLINE_LABEL

st.set_page_config(page_title="Gist Memory Explorer", page_icon="📖", layout="wide")


@st.cache_resource
def store():
    return open_db()


st.title("Gist Memory Explorer")
st.caption(f"Engine: {OFFLINE_LABEL}. Pause points, gists and look-ups come from lexical rules, not a model.")
render_documents(store().list_documents())
