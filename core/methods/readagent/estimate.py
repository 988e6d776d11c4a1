"""What a model build of a text will cost, before it runs: calls and tokens from the text's length
and the preset's page sizes, derived from how pagination windows work (``pagination.py``).

- A pagination window adds paragraphs while it holds fewer than ``max_words``, and offers a break
  once the page would hold ``min_words``; the model picks one of the offered breaks. A page so
  holds between ``min_words`` and ``max_words`` words: the expected page is the midpoint, and the
  paper's bound gives the range, ``words / max_words`` to ``words / min_words`` pages.
- One pagination call per page but the last (its window reaches the end of the text and is taken
  as it is when short); one gist call per page.
- A pagination prompt holds the window (about ``max_words``), what is shown of the previous page
  (``preceding_words``, or all of it: an expected page), the look-ahead (``LOOKAHEAD_WORDS``) and
  the template; a gist prompt holds one page and the template.
- Replies: a pagination reply names a label and a short reason; a gist is about ``GIST_SHARE`` of
  its page (the paper's ReadAgent compresses QuALITY by about 85%, so ~15-20% is kept).
Chapter headings that end pages, re-asks after a reply that cannot be parsed, and a model that
always picks the first or last break move the real figures; the range shows the last.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from core.methods.readagent.pagination import LOOKAHEAD_WORDS
from core.methods.readagent.presets import Preset
from core.text.tokens import count_tokens

TOKENS_PER_WORD = 1.33  # English prose with cl100k-like vocabularies
PAGINATION_REPLY_TOKENS = 40  # "Break point: <j>\n Because ..."
GIST_SHARE = 0.2  # gist tokens per page token


@dataclass(frozen=True)
class Estimate:
    words: int
    page_words: float  # expected words per page
    pages: int
    pages_low: int  # every page max_words long
    pages_high: int  # every page min_words long
    pagination_calls: int
    gist_calls: int
    input_tokens: int
    output_tokens: int

    @property
    def calls(self) -> int:
        return self.pagination_calls + self.gist_calls

    def cost(self, input_price: float | None, output_price: float | None) -> float | None:
        """The cost at these prices per million input and output tokens (None: no price given)."""
        return cost(self.input_tokens, self.output_tokens, input_price, output_price)

    def describe(self, input_price: float | None = None, output_price: float | None = None) -> str:
        """The estimate in a few lines, for the command line."""
        spent = self.cost(input_price, output_price)
        return (f"{self.words:,} words -> about {self.pages:,} pages of {self.page_words:,.0f} words "
                f"({self.pages_low:,}-{self.pages_high:,})\n"
                f"{self.calls:,} model calls: {self.pagination_calls:,} pagination + {self.gist_calls:,} gist\n"
                f"about {self.input_tokens:,} input and {self.output_tokens:,} output tokens"
                + (f"\ncost about {spent:,.4f} at {input_price or 0:g} / {output_price or 0:g} per million tokens"
                   if spent is not None else ""))


def cost(input_tokens: int, output_tokens: int, input_price: float | None, output_price: float | None) -> float | None:
    """What these tokens cost at prices per million input and output tokens (None: no price given)."""
    if not input_price and not output_price:
        return None
    return (input_tokens * (input_price or 0) + output_tokens * (output_price or 0)) / 1_000_000


def _template_tokens(prompt, **empty) -> int:
    return count_tokens(prompt.format(**empty))


def estimate_build(words: int, preset: Preset, *, tokens_per_word: float = TOKENS_PER_WORD) -> Estimate:
    """The expected calls and tokens of a model build of a ``words``-word text with ``preset``."""
    words = max(0, int(words))
    page_words = (preset.min_words + preset.max_words) / 2
    if words == 0:
        return Estimate(0, page_words, 0, 0, 0, 0, 0, 0, 0)
    pages = max(1, math.ceil(words / page_words))
    pages_low = max(1, math.ceil(words / preset.max_words))
    pages_high = max(1, math.ceil(words / preset.min_words))
    pagination_calls = pages - 1
    preceding = page_words if preset.preceding_words is None else min(page_words, preset.preceding_words)
    window = min(preset.max_words, words)
    pagination_prompt = (_template_tokens(preset.pagination_prompt, preceding="", passage="", following="")
                         + tokens_per_word * (window + preceding + LOOKAHEAD_WORDS))
    gist_template = _template_tokens(preset.gist_prompt, **{k: "" for k in preset.gist_prompt.keys})
    page_tokens = tokens_per_word * words / pages
    input_tokens = pagination_calls * pagination_prompt + pages * gist_template + tokens_per_word * words
    output_tokens = pagination_calls * PAGINATION_REPLY_TOKENS + GIST_SHARE * page_tokens * pages
    return Estimate(words, page_words, pages, pages_low, pages_high, pagination_calls, pages,
                    round(input_tokens), round(output_tokens))
