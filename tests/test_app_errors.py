"""Errors in the app speak of the app's controls: no command-line flag, no `python -m core` in an
error's app text, and the buttons and fields named as the screen names them."""
import ast
import re

import pytest

from core.errors import Cancelled, ModelError
from tests.conftest import ROOT

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+|python -m core")


def app_texts():
    """Every ``app=`` text given to an error in core/, as written (f-string parts joined)."""
    for path in sorted((ROOT / "core").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "app":
                parts = [n.value for n in ast.walk(node.value) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
                yield f"{path.relative_to(ROOT)}:{node.value.lineno}", "".join(parts)


APP_TEXTS = list(app_texts())


def test_there_are_app_texts_to_check():
    assert len(APP_TEXTS) > 20


@pytest.mark.parametrize("where,text", APP_TEXTS, ids=[w for w, _ in APP_TEXTS])
def test_an_errors_app_text_names_no_command_line_flag(where, text):
    assert not FLAG.search(text), f"{where}: {text}"


@pytest.mark.parametrize("error,says,never", [
    (Cancelled("The build was stopped.", cli="Build again with the same settings to resume.",
               app="Press Resume build to finish it."), "Press Resume build", "Build again"),
    (ModelError("No model configured.", cli="Pass --model (and --base-url for a local server).",
                app="Type the model's name in the sidebar's model settings."), "sidebar", "--base-url"),
    (ModelError("The server failed."), "The server failed.", "--"),  # no next step: the message alone
])
def test_for_app_gives_the_apps_next_step_and_for_cli_the_flags(error, says, never):
    assert says in error.for_app() and never not in error.for_app()


def test_a_stopped_build_and_an_unreachable_server_name_the_controls_on_screen():
    import threading

    from core.engine import OFFLINE
    from core.llm.openai_backend import OpenAIBackend
    from core.methods.readagent.build import BuildSettings, build_memory
    from core.methods.readagent.presets import PRESETS
    from core.store import open_db
    from core.text.documents import load_path
    from tests.conftest import book

    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled) as stopped:
        build_memory(open_db(":memory:"), load_path(book("off_course")), OFFLINE, BuildSettings(PRESETS["quality"]),
                     cancel=cancel)
    assert "Resume build" in stopped.value.for_app() and "--" not in stopped.value.for_app()
    backend = OpenAIBackend("m", "http://127.0.0.1:9/v1", "k", timeout=0.5, max_retries=0)
    with pytest.raises(ModelError) as unreachable:
        backend.complete("hi", temperature=0.0, max_tokens=4)
    assert '"Base URL" in the sidebar' in unreachable.value.for_app() and "--base-url" in unreachable.value.for_cli()
