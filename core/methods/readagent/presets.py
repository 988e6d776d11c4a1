"""Per-dataset settings from the ReadAgent paper (Table 8) and the prompts each uses."""
from __future__ import annotations

from dataclasses import dataclass, replace

from core import prompts
from core.errors import SettingError
from core.prompts import Prompt


@dataclass(frozen=True)
class Preset:
    name: str
    label: str
    min_words: int
    max_words: int
    pagination_prompt: Prompt
    gist_prompt: Prompt
    doc_kind: str  # how the prompts name the text: "article", "book", ...
    a_doc_kind: str
    ranked_lookup: bool = False  # NarrativeQA asks for pages in order of importance (App. I)
    # Words of the previous page shown before the window; None shows all of it (the notebook).
    preceding_words: int | None = None
    # A window that reaches the end of the text with fewer words becomes the last page
    # without asking (the notebook's 350).
    short_tail_words: int = 350

    def with_words(self, min_words: int | None, max_words: int | None) -> "Preset":
        """This preset with other page sizes (``None`` keeps the preset's); refuses sizes that cannot work."""
        chosen = replace(self, min_words=min_words or self.min_words, max_words=max_words or self.max_words)
        if chosen.min_words < 1:
            raise SettingError("min_words", chosen.min_words, "at least 1")
        if chosen.min_words >= chosen.max_words:
            raise SettingError("min_words", chosen.min_words, f"below max words ({chosen.max_words})")
        return chosen


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in [
        Preset("quality", "QuALITY (articles, stories)", 280, 600, prompts.PAGINATION, prompts.GIST,
               "article", "an article"),
        Preset("qmsum", "QMSum (meeting transcripts)", 280, 600, prompts.PAGINATION_QMSUM, prompts.GIST,
               "meeting transcript", "a meeting transcript"),
        Preset("narrativeqa", "NarrativeQA books (Gutenberg)", 500, 3000, prompts.PAGINATION_BOOK, prompts.GIST,
               "book", "a book", ranked_lookup=True, preceding_words=500),
        Preset("narrativeqa-movie", "NarrativeQA movie scripts", 600, 1000, prompts.PAGINATION_MOVIE,
               prompts.GIST_MOVIE, "movie script", "a movie script", ranked_lookup=True, preceding_words=600),
    ]
}
DEFAULT_PRESET = "quality"
BOOK_WORDS = 20_000  # longer texts are books: "auto" picks the NarrativeQA setting


def choose_preset(name: str | None, words: int) -> Preset:
    """A named preset, or for "auto"/None the one that fits a text of this length."""
    if name in (None, "", "auto"):
        return PRESETS["narrativeqa" if words > BOOK_WORDS else DEFAULT_PRESET]
    try:
        return PRESETS[name]
    except KeyError:
        raise SettingError("preset", name, f"one of {', '.join(PRESETS)} or auto") from None
