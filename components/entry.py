"""Every page opens inside app.py's navigation, even a link or a reload on a server just started.

Streamlit treats an app with a ``pages/`` folder beside its main script as an old-style multipage
app until the main script first calls ``st.navigation``: on a fresh server a link to ``/ask`` ran
``pages/ask.py`` alone, without the model settings, the URL state or the page names. A page that
finds itself run that way runs app.py in its place (which calls ``st.navigation`` and, through it,
this same page with the same URL), then stops.
"""
import runpy
from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

APP = Path(__file__).resolve().parent.parent / "app.py"


def through_app() -> None:
    """Call first in every page script."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        runpy.run_path(str(APP), run_name="__main__")
        st.stop()
