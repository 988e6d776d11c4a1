"""Every prompt the tool sends, named by step, with its placeholders and source.

Sources: the ReadAgent paper (Lee et al., ICML 2024) and the authors' demo
notebook as described in ``reference_notes.md``. Where the paper describes a
prompt without printing it, the text here is ours, written in the same spirit,
and says so in ``source``. ``tests/test_prompts.py`` formats every template
with its documented keys.
"""
from __future__ import annotations

import string
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Prompt:
    name: str
    text: str
    keys: dict[str, str]  # placeholder -> what goes there
    source: str
    # Model parameters this step needs beyond the defaults (e.g. a token cap).
    params: dict = field(default_factory=dict)

    def placeholders(self) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(self.text) if f}

    def format(self, **values) -> str:
        missing = set(self.keys) - set(values)
        extra = set(values) - set(self.keys)
        if missing or extra:
            raise KeyError(f"{self.name}: missing {sorted(missing)}, unexpected {sorted(extra)}")
        return self.text.format(**values)


_PASSAGE_KEYS = {
    "preceding": 'the tail of the previous page, prefixed "...", or "" at the start of a section',
    "passage": "the window's paragraphs, one per line, with numbered labels <j> between them",
    "following": 'the first paragraph after the window and "\\n...", or "" at the end of a section',
}

# --- Episode pagination (ReadAgent Sec. 3.1) -------------------------------------------

PAGINATION = Prompt(
    name="pagination",
    source="ReadAgent paper, Sec. 3.1 'Example Pagination Prompt' (QuALITY); window layout from the demo notebook",
    keys=_PASSAGE_KEYS,
    text="""You are given a passage that is taken from a larger text (article, book, ...) and some numbered labels between the paragraphs in the passage.
Numbered labels are in angle brackets. For example, if the label number is 19, it shows as <19> in text.
Please choose a label where it is natural to break reading.
The label can be a scene transition, the end of a dialogue, the end of an argument, a narrative transition, etc.
Please answer with the break point label and explain.
For example, if <57> is a good point to break, answer with "Break point: <57>\\n Because ..."

Passage:

{preceding}
{passage}
{following}
""",
)

PAGINATION_QMSUM = Prompt(
    name="pagination-qmsum",
    source="ReadAgent demo notebook, QMSum (meeting transcript) variant; replies 'Label: <57>'",
    keys=_PASSAGE_KEYS,
    text="""You are given a passage that is taken from a larger meeting transcript.
There are some numbered labels between the paragraphs (like <0>) in the passage.
Please choose one label at a natural transition in the passage.
For example, the label can be at the end of a dialogue, the end of an argument, a change in the topic being discussed, etc.
Please respond with the label and explain your choice.
For example, if <57> is a natural transition, answer with "Label: <57>\\n Because ..."

Passage:

{preceding}
{passage}
{following}
""",
)

PAGINATION_BOOK = Prompt(
    name="pagination-book",
    source=(
        "Ours, in the spirit of the paper's NarrativeQA Gutenberg prompt (Table 8 setting; the paper "
        "says it asks for a major section break, placed before chapter titles, but does not print it)"
    ),
    keys=_PASSAGE_KEYS,
    text="""You are given a passage that is taken from a book and some numbered labels between the paragraphs in the passage.
Numbered labels are in angle brackets. For example, if the label number is 19, it shows as <19> in text.
Please choose a label at a major section break, such as the end of a chapter, a change of scene or a jump in time.
If a chapter or section title follows a label, choose the label just before the title.
Please answer with the break point label and explain.
For example, if <57> is a good point to break, answer with "Break point: <57>\\n Because ..."

Passage:

{preceding}
{passage}
{following}
""",
)

PAGINATION_MOVIE = Prompt(
    name="pagination-movie",
    source="Ours, in the spirit of the paper's NarrativeQA movie-script setting (Table 8), which it does not print",
    keys=_PASSAGE_KEYS,
    text="""You are given a passage that is taken from a movie script and some numbered labels between the paragraphs in the passage.
Numbered labels are in angle brackets. For example, if the label number is 19, it shows as <19> in text.
Please choose a label where it is natural to break reading.
The label can be a scene change (for example before an INT. or EXT. heading), the end of a dialogue, a cut to another place, etc.
Please answer with the break point label and explain.
For example, if <57> is a good point to break, answer with "Break point: <57>\\n Because ..."

Passage:

{preceding}
{passage}
{following}
""",
)

# --- Memory gisting (Sec. 3.1) -------------------------------------------------------------

GIST = Prompt(
    name="gist",
    source="ReadAgent paper, Sec. 3.1 'Example Gisting Prompt'",
    keys={"page": "the page's raw text, paragraphs separated by newlines"},
    text="""Please shorten the following passage.
Just give me a shortened version. DO NOT explain your reason.

Passage:
{page}
""",
)

GIST_MOVIE = Prompt(
    name="gist-movie",
    source="ReadAgent paper, Sec. 3.1 gisting prompt; the movie-script variant caps the reply at 128 tokens (reference notes)",
    keys=GIST.keys,
    text=GIST.text,
    params={"max_tokens": 128},
)

GIST_CONDITIONAL = Prompt(
    name="gist-conditional",
    source="Ours, for Conditional ReadAgent (paper App. G.1: the gisting step includes the task); the paper "
           "describes this variant without printing a prompt, so the gisting prompt is extended with the question",
    keys={"question": "the question known before reading", "page": GIST.keys["page"]},
    text="""Please shorten the following passage. Keep what is needed to answer the question below, and drop what is not.
Just give me a shortened version. DO NOT explain your reason.

Question:
{question}

Passage:
{page}
""",
)

# --- Context length control: page merging (App. I) ----------------------------------------------

PAGE_MERGE = Prompt(
    name="page-merge",
    source="ReadAgent paper, App. I 'Example NarrativeQA Gutenberg Page Merging Prompt', word for word",
    keys={"previous_page": "the earlier page's text (its end when it is too long for the window)",
          "current_page": "the next page's text (its start when it is too long for the window)"},
    text="""Given Page 1 and Page 2, please tell me whether Page 2 starts a new chapter/section/book that is different from what’s in Page 1. Please answer with yes, no, or not sure.

Page 1:
{previous_page}

Page 2:
{current_page}
""",
)

# --- Interactive look-up (Sec. 3.2) ------------------------------------------------------------

_LOOKUP_KEYS = {
    "a_doc_kind": 'what was read, with its article: "an article", "a meeting transcript", "a book", ...',
    "doc_kind": 'what was read: "article", "meeting transcript", "book", "movie script"',
    "question_kind": '"a multiple choice question" or "a question"',
    "max_pages": "the most pages the model may ask for",
    "gist_memory": "the gist memory: '<Page i>\\n{gist}' blocks joined by newlines",
    "question": "the question, with its options (A)-(D) when multiple choice",
}

LOOKUP_PARALLEL = Prompt(
    name="lookup-parallel",
    source=(
        "ReadAgent paper, Sec. 3.2 'Example Parallel Lookup Prompt (ReadAgent-P)'; closing line from "
        "App. F ('Take a deep breath ...' helped on QuALITY)"
    ),
    keys=_LOOKUP_KEYS,
    text="""The following text is what you remember from reading {a_doc_kind} and {question_kind} related to it.
You may read 1 to {max_pages} page(s) of the {doc_kind} again to refresh your memory to prepare yourself for the question.
Please respond with which page(s) you would like to read.
For example, if you only need to read Page 8, respond with "I want to look up Page [8] to ..."; if you would like to read Page 7 and 12, respond with "I want to look up Page [7, 12] to ..."; if you would like to read Page 2, 3, 7, 15 and 18, respond with "I want to look up Page [2, 3, 7, 15, 18] to ...".
DO NOT select more pages if you don't need to.
You don't need to answer the question yet.

Text:
{gist_memory}

Question:
{question}

Take a deep breath and tell me: Which page(s) would you like to read again?
""",
)

LOOKUP_PARALLEL_RANKED = Prompt(
    name="lookup-parallel-ranked",
    source="ReadAgent paper, App. I 'Example Parallel Lookup Prompt (ReadAgent-P) for NarrativeQA' (pages in order of importance)",
    keys=_LOOKUP_KEYS,
    text="""The following text is what you remember from reading {a_doc_kind} and {question_kind} related to it.
You may read 1 to {max_pages} page(s) of the {doc_kind} again to refresh your memory to prepare yourself for the question.
Please respond with which page(s) you would like to read in the order of importance, beginning with the most important page number.
For example, if you only need to read Page 8, respond with "I want to look up Page [8] to ...".
If you would like to read Page 12 and 7, respond with "I want to look up Page [12, 7] to ...".
If you would like to read Page 15, 2 and 3, respond with "I want to look up Page [15, 2, 3] to ...".
DO NOT select more pages if you don't need to.
You don't need to answer the question yet.

Text:
{gist_memory}

Question:
{question}
""",
)

LOOKUP_SEQUENTIAL = Prompt(
    name="lookup-sequential",
    source="ReadAgent paper, Sec. 3.2 'Example Sequential Lookup Prompt (ReadAgent-S)'",
    keys={
        "a_doc_kind": _LOOKUP_KEYS["a_doc_kind"],
        "doc_kind": _LOOKUP_KEYS["doc_kind"],
        "context": "the gist memory with the pages read so far expanded in place",
        "already_read": 'page numbers read so far, comma separated, or "None"',
        "question": _LOOKUP_KEYS["question"],
    },
    text="""The following text is what you remember from reading {a_doc_kind}, followed by a question about the {doc_kind}.
You may read multiple pages of the {doc_kind} again to refresh your memory and prepare to answer the question.
Each page that you re-read can significantly improve your chance of answering the question correctly.
Please specify a SINGLE page you would like to read again or say "STOP".
To read a page again, respond with "Page $PAGE_NUM", replacing $PAGE_NUM with the target page number.
You can only specify a SINGLE page in your response at this time.
To stop, simply say "STOP". DO NOT answer the question in your response.

Text:
{context}

Pages re-read already (DO NOT ask to read them again):
{already_read}

Question:
{question}

Specify a SINGLE page to read again, or say STOP:
""",
)

# --- Response (App. F) -----------------------------------------------------------------------

ANSWER_CHOICE = Prompt(
    name="answer-choice",
    source="ReadAgent paper, App. F 'Example Response Prompt for Multiple-Choice Questions'",
    keys={
        "context": "gists with expanded pages (or the full text, or retrieved pages)",
        "question": "the question",
        "options": "the options, one per line, as (A) ... (B) ...",
    },
    text="""Read the following article and answer a multiple choice question.
For example, if (C) is correct, answer with "Answer: (C) ..."

Article:
{context}

Question:
{question}
{options}
""",
)

ANSWER_FREEFORM = Prompt(
    name="answer-freeform",
    source="ReadAgent paper, App. F 'Example Response Prompt for Free-form Answers'",
    keys={"context": ANSWER_CHOICE.keys["context"], "question": "the question or instruction"},
    text="""{context}

Question: {question}

Answer the question based on the above passage and retrieved pages. Your answer should be short and concise.
""",
)

# --- Bounded re-ask (ours) ------------------------------------------------------------------------

REASK = Prompt(
    name="reask",
    source="Ours: the notebook never re-asks; we show the model its unusable reply and say why, once or twice",
    keys={
        "prompt": "the original prompt, unchanged",
        "reply": "the reply that could not be used",
        "problem": "what was wrong with it, in one sentence",
    },
    text="""{prompt}

Your previous reply was:
{reply}

That reply could not be used: {problem}. Please answer again, exactly in the format asked for above.
""",
)


# --- MemWalker (Chen et al., "Walking Down the Memory Maze") ---------------------------------
# The paper prints its navigation prompts in Table 1 (triage, leaf); its summarisation prompts
# are in App. A.1, which our copy of the paper does not reproduce, so those two are ours.

MEMWALKER_SUMMARY_LEAF = Prompt(
    name="memwalker-summary-leaf",
    source="Ours, in the spirit of MemWalker Sec. 3 'Memory tree construction' (App. A.1 not in our copy)",
    keys={"text": "one segment of the text (about segment_tokens tokens), paragraphs separated by newlines"},
    text="""Summarize the following part of a longer text.
Keep the people, places, events and facts it mentions, in the order they appear.
Just give me the summary. DO NOT explain your reason.

Text:
{text}
""",
)

MEMWALKER_SUMMARY_PARENT = Prompt(
    name="memwalker-summary-parent",
    source="Ours, in the spirit of MemWalker Sec. 3: a parent node summarises its children's summaries",
    keys={"summaries": "the children's summaries in text order, one per line as 'Summary i: ...'"},
    text="""The following are summaries of consecutive parts of a longer text.
Combine them into one summary of the whole part, keeping the people, places, events and facts that matter most.
Just give me the combined summary. DO NOT explain your reason.

Summaries:
{summaries}
""",
)

MEMWALKER_TRIAGE = Prompt(
    name="memwalker-triage",
    source=("MemWalker paper, Table 1 triage prompt (Sec. 3 'Navigational prompt design'); the revert "
            "option (-1) at non-root nodes is the paper's |M_t|+1-th action, worded by us; the "
            "background block is the working memory (Sec. 3 'Working memory')"),
    keys={
        "a_doc_kind": 'what is being read, with its article: "an article", "a book", "a meeting transcript", ...',
        "question": "the question, with its options (A)-(D) when multiple choice",
        "working_memory": 'the summaries carried along the path as "Background information: ...\n\n", or ""',
        "summaries": "the children's summaries, one per line as 'Summary i: ...'",
        "revert": 'at a non-root node, the sentence offering action -1 (go back to the parent); "" at the root',
        "actions": 'the valid actions as shown in the format line, e.g. "0 / 1 / 2" or "0 / 1 / -1"',
    },
    text="""The following passage(s) are the summaries of the different parts of {a_doc_kind}.
To answer the question: {question}
Which of the following summary is MOST LIKELY to contain information about the answer?
First provide reasoning to compare the summaries before you make the decision.

{working_memory}{summaries}

{revert}Reply with the passage number as your action.
You MUST choose one summary number and you should reply with the following format:
#####
Reasoning: ...
Action: {actions}
#####
""",
)

MEMWALKER_LEAF = Prompt(
    name="memwalker-leaf",
    source="MemWalker paper, Table 1 leaf prompt (Sec. 3); working memory in place of [WORKING_MEMORY]",
    keys={
        "working_memory": 'the summaries carried along the path as "Background information: ...\n", or ""',
        "text": "the leaf's raw segment",
        "question": "the question, with its options (A)-(D) when multiple choice",
        "answer_format": '"(A) ..." for a multiple choice question, "..." otherwise',
    },
    text="""Read the text in triple quotes and answer a question:
\"\"\"
{working_memory}Main text: {text}
\"\"\"

{question}
If the answer CANNOT be inferred from the text above, reply with action -1.
If the answer CAN be inferred from the text above, reply with action -2, and also provide your reasoning, and the final answer.
You are ONLY allowed to reply with action -2 or -1.
Your should reply with the following format:
#####
Reasoning: ...
Action: -2 or -1
Answer: {answer_format}
#####
""",
)


# --- LLM raters for free-form answers (ReadAgent Sec. 4.1) ---------------------------------------

_RATER_KEYS = {"question": "the question or instruction", "response": "the method's answer",
               "reference": "one reference answer"}
_RATER_HEAD = """After reading some text, John was given the following question about the text:

{question}

John’s answer to the question was:

{response}

The ground truth answer was:

{reference}

"""
RATER_STRICT = Prompt(
    name="rater-strict",
    source="ReadAgent paper, Sec. 4.1 'Strict LLM Rater Prompt'",
    keys=_RATER_KEYS,
    text=_RATER_HEAD + "Does John’s answer agree with the ground truth answer? Please answer YES or NO.\n",
)
RATER_PERMISSIVE = Prompt(
    name="rater-permissive",
    source="ReadAgent paper, Sec. 4.1 'Permissive LLM Rater Prompt'",
    keys=_RATER_KEYS,
    text=_RATER_HEAD + (
        "Does John’s answer agree with the ground truth answer? Please answer \u201cYes\u201d, \u201cYes, "
        "partially\u201d, or \u201cNo\u201d. If John’s response has any overlap with the ground truth answer, "
        "answer \u201cYes, partially\u201d. If John’s response contains the ground truth answer, answer "
        "\u201cYes\u201d. If John’s response is more specific than the ground truth answer, answer \u201cYes\u201d.\n"),
)


# --- Segment+ (Shi et al., "Segment+: Long Text Processing with Short-Context Language Models") --
# The gather (note) and merge prompts are printed in the paper's Appendix C (HotpotQA wording,
# which the paper uses for every dataset with small changes). The Keep/Remove filter is
# described in Sec. 3.2 but not printed, so that prompt is ours.

SEGMENT_NOTE = Prompt(
    name="segmentplus-note",
    source="Segment+ paper, Appendix C query prompt (HotpotQA; the same for other datasets)",
    keys={
        "segment": "one segment of the document (about 3000 tokens, paragraph-aligned)",
        "question": "the question, with its options (A)-(D) when multiple choice",
    },
    text="""You are provided with a segment from a long document along with a question related to this document.
Segment Content: {segment}
—
Question: {question}
—
Your task: Evaluate the provided segment against the question to identify and categorize information into two distinct types: "Evidence" and "Reasoning". Your assessment and categorization should adhere to the following guidelines:
Guidelines for Note-Writing:
Your note should be meticulously structured into two main parts: Evidence and Reasoning, following these guidelines:
- Evidence:
1. Extract key sentences or descriptions from the segment that are pertinent to the question, with a focus on specific details such as numbers, relevant words, and other significant elements.
(1) Include content that directly relates to the question, providing a straightforward answer.
(2) Also include content that may not directly answer the question but is valuable for answering it when combined with information from other segments. For instance, for questions about someone's birthplace, include all mentioned birthplaces for potential matching in later analysis. Similarly, if the question involves several events but this segment only contains information about one event, you should include it.
2. Accurately quote the directly related sentences to present clear and unambiguous evidence.
- Reasoning:
1. Analyze the question and any sub-questions, offering answers, summaries, interpretations, or any relevant commentary to deepen the understanding of the question.
The note should be formatted in JSON as follows:
{{ "Evidence": "Your evidence content here",
"Reasoning": "Your reasoning content here"}}
""",
)

SEGMENT_FILTER = Prompt(
    name="segmentplus-filter",
    source=("Ours, in the spirit of Segment+ Sec. 3.2: the paper prompts the model with the question and the "
            "JSON note and labels it Keep or Remove by whether it gives at least one piece of useful "
            "information, but does not print the prompt"),
    keys={
        "question": "the question, with its options (A)-(D) when multiple choice",
        "note": 'one segment\'s note as JSON: {"Evidence": "...", "Reasoning": "..."}',
    },
    text="""You are given a question about a long document and a note written from one segment of that document.
The note is in JSON with two parts: "Evidence" quotes the segment, and "Reasoning" interprets it for the question.

Question: {question}
—
Note: {note}
—
Your task: decide whether the note should be kept for answering the question.
- Keep: the note provides at least one piece of useful information for answering the question, even if it only helps when combined with notes from other segments.
- Remove: the Evidence is empty, or the note says the segment has no information about the question, or it only guesses an answer that its Evidence does not support.

Reply with one label, Keep or Remove, then one sentence saying why, in this format:
Label: Keep
Reason: ...
""",
)

SEGMENT_MERGE = Prompt(
    name="segmentplus-merge",
    source="Segment+ paper, Appendix C merge prompt (the same for every dataset)",
    keys={
        "notes": 'the batch\'s notes in document order, one JSON object per line: {"Evidence": ..., "Reasoning": ...}',
        "question": "the question, with its options (A)-(D) when multiple choice",
    },
    text="""You are presented with the collection of information from various parts of a lengthy document, along with a specific query that requires a response. The collected information is clearly divided into two parts: Evidence and Reasoning. The Evidence comes from original content of the article, the Reasoning is the model's interpretation based on this evidence.
Collected information: {notes}
—
Question: {question}
—
Detailed Instructions: Process the information from these notes in two separate parts: merge the Evidence sections together and then merge the Reasoning sections.
1. Evidence Synthesis: Examine the Evidence section closely, preserving original content that could possibly help answer the query. Aim to retain as much information as possible without omission.
2. Reasoning Enhancement: Ensure the reasoning is clear, well-structured, and concisely addresses the query within 1-2 sentences.
Upon completing your analysis, update the collected information in the following JSON format:
{{ "Evidence": "Your evidence content here",
"Reasoning": "Your reasoning content here" }}
""",
)

LETTERS = "ABCDEFGHIJ"  # the one source of option letters: (A), (B), ...


def option_letters(n: int) -> str:
    return LETTERS[:n]


def format_options(options) -> str:
    return "\n".join(f"({letter}) {text}" for letter, text in zip(option_letters(len(options)), options))


ALL = [
    PAGINATION, PAGINATION_QMSUM, PAGINATION_BOOK, PAGINATION_MOVIE,
    GIST, GIST_MOVIE, GIST_CONDITIONAL, PAGE_MERGE,
    LOOKUP_PARALLEL, LOOKUP_PARALLEL_RANKED, LOOKUP_SEQUENTIAL,
    ANSWER_CHOICE, ANSWER_FREEFORM,
    REASK,
    MEMWALKER_SUMMARY_LEAF, MEMWALKER_SUMMARY_PARENT, MEMWALKER_TRIAGE, MEMWALKER_LEAF,
    SEGMENT_NOTE, SEGMENT_FILTER, SEGMENT_MERGE,
    RATER_STRICT, RATER_PERMISSIVE,
]
