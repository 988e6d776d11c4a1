import re

import pytest

from core import prompts
from core.methods.readagent.presets import PRESETS


@pytest.mark.parametrize("template", prompts.ALL, ids=lambda t: t.name)
def test_every_template_formats_with_its_documented_keys(template):
    assert template.placeholders() == set(template.keys), "document every placeholder, and only those"
    assert template.source, "say where the prompt comes from"
    text = template.format(**{key: f"<<{key}>>" for key in template.keys})
    for key in template.keys:
        assert f"<<{key}>>" in text
    assert not re.search(r"\{\w+\}", text)  # no placeholder left unformatted (JSON examples may use braces)


def test_format_refuses_missing_or_unexpected_keys():
    with pytest.raises(KeyError, match="missing"):
        prompts.GIST.format()
    with pytest.raises(KeyError, match="unexpected"):
        prompts.GIST.format(page="x", extra="y")


def test_presets_match_the_papers_table_8():
    assert {n: (p.min_words, p.max_words) for n, p in PRESETS.items()} == {
        "quality": (280, 600), "qmsum": (280, 600), "narrativeqa": (500, 3000), "narrativeqa-movie": (600, 1000)}
    assert PRESETS["qmsum"].pagination_prompt is prompts.PAGINATION_QMSUM
    assert PRESETS["narrativeqa-movie"].gist_prompt.params == {"max_tokens": 128}


def test_the_papers_wording_is_kept():
    assert "Please shorten the following passage." in prompts.GIST.text
    assert 'answer with "Break point: <57>\\n Because ..."' in prompts.PAGINATION.text
    assert "Take a deep breath and tell me" in prompts.LOOKUP_PARALLEL.text
    assert 'respond with "Page $PAGE_NUM"' in prompts.LOOKUP_SEQUENTIAL.text
