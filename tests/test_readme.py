"""The README's commands are the truth: CI runs exactly its test command."""
import re

from tests.conftest import ROOT


def readme_commands():
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_readme_gives_exactly_two_setup_commands_first():
    start, test = readme_commands()[:2]
    assert "pip install -r requirements.txt" in start and "streamlit run app.py" in start
    assert "pip install -r requirements.txt" in test and "pytest" in test


def test_ci_runs_the_readme_test_command_on_a_clean_clone():
    test_command = readme_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "git clone" in ci and "mktemp -d" in ci  # a clone with nothing beside it
    heading = "Install and run all the tests"
    assert f"grep -A3 '^{heading}' README.md" in ci  # CI reads the command from the README...
    lines = (ROOT / "README.md").read_text().splitlines()
    assert test_command in lines[lines.index(f"{heading}:"):][:4]  # ...which is where the README has it
