"""Errors meant for the person using the tool.

An error says what happened; what to do next depends on who is asking. The
command line and the app have different controls, so an error carries its next
step for each (``cli``, ``app``) and, when one setting is at fault, that
setting's name, which each front end phrases its own way (``--segment-tokens``
on the command line, "Tokens per segment" in the app). ``str(error)`` is the
plain message with no front end's words in it.

Nothing is swallowed: code that cannot continue raises one of these.
"""
from __future__ import annotations


class GistError(Exception):
    """Base class: an error whose message is written for the user."""

    def __init__(self, message: str, *, cli: str = "", app: str = ""):
        super().__init__(message)
        self.message = message
        self.cli = cli
        self.app = app

    def __str__(self) -> str:
        return self.message

    def for_cli(self) -> str:
        """The message with the next step on the command line."""
        return f"{self.message} {self.cli}".strip()

    def for_app(self, labels: dict[str, str] | None = None) -> str:
        """The message with the next step in the app; ``labels`` name settings as the screen does."""
        return f"{self.message} {self.app}".strip()


class SettingError(GistError):
    """One setting has a value that cannot work: ``name must be requirement (got value)``."""

    def __init__(self, setting: str, value: object, requirement: str, why: str = ""):
        self.setting, self.value, self.requirement, self.why = setting, value, requirement, why
        super().__init__(self._phrase(setting.replace("_", " ")))

    def _phrase(self, name: str) -> str:
        return f"{name} must be {self.requirement} (got {self.value!r}){'; ' + self.why if self.why else ''}."

    def for_cli(self) -> str:
        return self._phrase("--" + self.setting.replace("_", "-"))

    def for_app(self, labels: dict[str, str] | None = None) -> str:
        label = (labels or {}).get(self.setting) or self.setting.replace("_", " ").capitalize()
        return self._phrase(label)


class DocumentError(GistError):
    """The input document cannot be read (missing, empty, binary, undecodable)."""


class ModelError(GistError):
    """The model cannot be used: not configured, unreachable, key rejected, unknown model."""


class NotFound(GistError):
    """A document, gist memory or run id that is not in the database."""


class DatabaseError(GistError):
    """The database file cannot be used: not ours, read-only, unreachable."""


class Cancelled(GistError):
    """Long work was stopped on request; what was finished is kept."""


class ContextWindowError(ModelError):
    """A prompt and its reply would not fit in the model's context window, so nothing was sent."""

    setting = "context_tokens"

    def __init__(self, message: str):
        super().__init__(
            message,
            cli="If the model's window is larger, say so with --context-tokens N (or GIST_MEMORY_CONTEXT_TOKENS); "
                "otherwise use a model with a larger window, or smaller pages or segments.",
            app="If the model's window is larger, say so in \"Context window (tokens)\" in the sidebar's model "
                "settings; otherwise choose a model with a larger window, or smaller pages or segments.")
