"""Real-browser tests: Debian's Chromium (installed here if missing) and the app served by
``streamlit run`` on a free port with its own database. Screenshots go to test-artifacts/."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"
TALL = {"width": 1400, "height": 2400}


def _ensure_chromium() -> str:
    if Path(CHROMIUM).exists():
        return CHROMIUM
    apt = shutil.which("apt-get")
    if apt is None:
        pytest.fail("The browser tests need Chromium: install Debian's `chromium` package.")
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["update"], ["install", "-y", "--no-install-recommends", "chromium"]):
        done = subprocess.run([*sudo, apt, *cmd], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            pytest.fail(f"Could not install chromium with apt-get {cmd[0]}: {done.stderr[-500:]}")
    return CHROMIUM


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {
        **browser_type_launch_args,
        "executable_path": _ensure_chromium(),
        "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": TALL}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AppServer:
    def __init__(self, db: Path, extra_env: dict | None = None):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.db = db
        env = {**os.environ, "GIST_MEMORY_DB": str(db), **(extra_env or {})}
        for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GIST_MEMORY_MODEL"):
            env.pop(var, None)
        self.log = open(db.with_suffix(".log"), "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(self.port),
             "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited: {db.with_suffix('.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError("streamlit did not become healthy within 60 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture(scope="module")
def app_server(tmp_path_factory):
    server = AppServer(tmp_path_factory.mktemp("app") / "app.db")
    yield server
    server.stop()


@pytest.fixture
def shot():
    """shot(page, name): a full-page screenshot in test-artifacts/."""
    ARTIFACTS.mkdir(exist_ok=True)

    def take(page, name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path
    return take
