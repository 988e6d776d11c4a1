"""Errors meant for the person using the tool.

Every message says what happened *and what to do next*. Nothing is swallowed:
code that cannot continue raises one of these, and the CLI and the app show
its message as it is.
"""


class GistError(Exception):
    """Base class: an error whose message is written for the user."""


class DocumentError(GistError):
    """The input document cannot be read (missing, empty, binary, undecodable)."""


class ModelError(GistError):
    """The model cannot be used: not configured, unreachable, key rejected, unknown model."""


class NotFound(GistError):
    """A document, gist memory or run id that is not in the database."""


class Cancelled(GistError):
    """Long work was stopped on request; what was finished is kept."""
