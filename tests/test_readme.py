"""The README's commands are the truth: CI runs exactly its test command."""
import re

from tests.conftest import ROOT


def readme_commands():
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_readme_gives_exactly_two_setup_commands_first():
    start, test = readme_commands()[:2]
    assert "pip install -r requirements.txt" in start and "streamlit run app.py" in start
    assert "pip install -r requirements.txt" in test and "pytest" in test


def test_ci_runs_the_readme_test_command():
    test_command = readme_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_command in ci.splitlines()
