from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


def test_app_starts_and_labels_the_offline_engine():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not at.exception
    assert at.title[0].value == "Gist Memory Explorer"
    assert "no LLM" in at.caption[0].value
