"""Segment+'s reply parsers: pure ``str -> Parsed`` functions for a note (JSON, tolerantly)
and for the filter's Keep/Remove label."""
from __future__ import annotations

import ast
import json
import re

from core.methods.segment_plus.notes import Label, Note
from core.parsing import Parsed, clean, drop_thinking, other_answer, refusal, strip_thinking

_NOTE_ECHO = ("guidelines for note-writing", "your task: evaluate the provided segment",
              "detailed instructions: process the information")
_PLACEHOLDERS = ("your evidence content here", "your reasoning content here")
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)(?:```|$)", re.S)
_KEYS = {"evidence": "evidence", "evidences": "evidence", "reasoning": "reasoning", "reason": "reasoning"}
_LOOSE_KEY = re.compile(r"""["']?\b(evidences?|reasoning)\b["']?\s*[:=]\s*""", re.I)


def _object_span(text: str) -> tuple[str, bool] | None:
    """The first {...} in ``text`` (quotes respected), and whether it had to be closed."""
    start = text.find("{")
    if start < 0:
        return None
    depth, quote, escaped = 0, "", False
    for i in range(start, len(text)):
        c = text[i]
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = ""
        elif c in "\"'" and (c == '"' or text[i - 1] in "{[,: \n\t"):
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1], False
    return text[start:] + (quote or "") + "}" * max(depth, 1), True


def _load_object(blob: str) -> tuple[dict | None, str]:
    """json, then without trailing commas, then as a Python literal (single quotes)."""
    try:
        value = json.loads(blob)
        return (value, "") if isinstance(value, dict) else (None, "")
    except json.JSONDecodeError:
        pass
    relaxed = re.sub(r",\s*([}\]])", r"\1", blob)
    try:
        value = json.loads(relaxed)
        return (value, "removed trailing commas") if isinstance(value, dict) else (None, "")
    except json.JSONDecodeError:
        pass
    try:
        value = ast.literal_eval(relaxed)
        return (value, "read a Python-style (single-quoted) object") if isinstance(value, dict) else (None, "")
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None, ""


def _as_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, (list, tuple)):
        return " ".join(t for t in (_as_text(v) for v in value) if t)
    if isinstance(value, dict):
        return " ".join(f"{k}: {_as_text(v)}" for k, v in value.items())
    return str(value)


def _loose_fields(text: str) -> dict[str, str]:
    """'Evidence: ... Reasoning: ...' (or a broken JSON object) read as key/value text."""
    matches = list(_LOOSE_KEY.finditer(text))
    out: dict[str, str] = {}
    for n, match in enumerate(matches):
        end = matches[n + 1].start() if n + 1 < len(matches) else len(text)
        value = text[match.end():end].strip().rstrip("}").strip().rstrip(",").strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif value[:1] in "\"'":
            value = value[1:]
        out.setdefault(_KEYS[match.group(1).lower()], " ".join(value.replace('\\"', '"').split()))
    return out


def _what_instead(text: str) -> str:
    """What a reply that holds no note is instead, when that can be said ("" otherwise)."""
    if refusal(text):
        return "a refusal"
    if not drop_thinking(clean(text))[0]:
        return "only the start of the model's thinking (\"Hmm, let me think...\")"
    kind = other_answer(clean(text))
    return kind if kind and kind != "JSON" else ""


def parse_note(reply: str) -> Parsed[Note]:
    """A note ``{"Evidence": "...", "Reasoning": "..."}``. Accepts code fences, text around
    the object, single quotes, trailing commas, a cut-off object, lists as values, any key
    case, and plain 'Evidence: ... Reasoning: ...'. One missing part is taken as empty."""
    text = strip_thinking(reply).strip()
    if not text:
        return Parsed(None, "the reply was empty")
    lowered = text.lower()
    if any(echo in lowered for echo in _NOTE_ECHO):
        return Parsed(None, "the reply repeats the instructions instead of writing the note")
    notes: list[str] = []
    fence = _FENCE.search(text)
    if fence and fence.group(1).strip():
        text = fence.group(1).strip()
        notes.append("removed a code fence")
    fields: dict[str, str] = {}
    span = _object_span(text)
    if span is not None:
        blob, closed = span
        obj, how = _load_object(blob)
        if obj is not None:
            for key, value in obj.items():
                name = _KEYS.get(str(key).strip().lower())
                if name:
                    fields.setdefault(name, _as_text(value))
            if how:
                notes.append(how)
            if closed:
                notes.append("closed a cut-off JSON object")
            if text.strip() != blob.strip() and not closed:
                notes.append("ignored text around the JSON object")
    if not fields:
        fields = _loose_fields(text)
        if fields:
            notes.append("read the note from key/value text, not JSON")
    if not fields:
        what = _what_instead(text)
        return Parsed(None, f'it is not a note{" but " + what if what else ""}; reply with JSON like '
                            '{"Evidence": "...", "Reasoning": "..."}')
    if any(fields.get(k, "").strip().lower() in _PLACEHOLDERS for k in ("evidence", "reasoning")):
        return Parsed(None, "the note repeats the format's placeholder text instead of quoting the segment")
    for key in ("evidence", "reasoning"):
        if key not in fields:
            notes.append(f"no {key.title()} part; took it as empty")
    evidence, reasoning = fields.get("evidence", ""), fields.get("reasoning", "")
    if not evidence and not reasoning:
        return Parsed(None, "both Evidence and Reasoning are empty; quote the segment or say it has no information")
    return Parsed(Note(evidence, reasoning), notes=tuple(notes))


_LABEL_ECHO = ("reply with one label", "decide whether the note should be kept")
_LABELLED = re.compile(r"""\b(?:label|decision|answer|verdict)["']?\s*[:=\-]?\s*["']?\s*(keep|remove)\b""", re.I)
_LEADING = re.compile(r"^\W*(keep|remove)\b", re.I)
_REASON = re.compile(r"\breason\s*:\s*(.*)$", re.I | re.S)


def parse_label(reply: str) -> Parsed[Label]:
    """'Label: Keep' / 'Label: Remove' with an optional 'Reason: ...'; also a bare label,
    '**Remove**', or JSON {"label": "Keep"}. A reply naming both without a label line is
    refused (it cannot be read)."""
    text = strip_thinking(reply).replace("*", "").replace("`", "").strip()
    if not text:
        return Parsed(None, "the reply was empty")
    if any(echo in text.lower() for echo in _LABEL_ECHO):
        return Parsed(None, "the reply repeats the instructions instead of labelling the note")
    match = _LABELLED.search(text) or _LEADING.search(text)
    notes: tuple[str, ...] = ()
    if match is None:
        named = {w.lower() for w in re.findall(r"\b(keep|remove)\b", text, re.I)}
        if len(named) != 1:
            problem = "it names both Keep and Remove" if named else "it names no label"
            return Parsed(None, f'{problem}; reply "Label: Keep" or "Label: Remove"')
        match = re.search(r"\b(keep|remove)\b", text, re.I)
        notes = ("no 'Label:' line; took the one label the reply names",)
    reason_match = _REASON.search(text)
    reason = reason_match.group(1) if reason_match else text[match.end():]
    reason = " ".join(reason.strip(" .:-\n\"'}").split())[:600]
    return Parsed(Label(match.group(1).lower() == "keep", reason), notes=notes)
