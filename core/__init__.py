"""Gist Memory Explorer's core: ReadAgent and friends, with no UI (never imports Streamlit)."""
