"""Answers: the model's prompt and stream (`prompt`, `support`), the extractive answer without a
model (`units` reads a chunk into what an answer can show, `extractive` chooses among them, one
selector per mode), and the tuning numbers of both (`params`)."""

from .extractive import (
    EXAMPLE_REQUEST,
    NOT_COVERED,
    SUMMARY_CUES,
    Answer,
    Mode,
    Request,
    answer_pool,
    extractive,
    mode_of,
    outline_summary,
)
from .params import ANSWER_PARAMS, AnswerParams
from .prompt import (
    CITATION,
    SYSTEM,
    Prompt,
    Source,
    build_prompt,
    citations,
    cited_numbers,
    fit_prompt,
    neutralised,
    passage,
)
from .support import ThinkSplitter, stream, supported_by, without_thinking
from .units import Unit, lead_text, units

__all__ = [
    "ANSWER_PARAMS",
    "CITATION",
    "EXAMPLE_REQUEST",
    "NOT_COVERED",
    "SUMMARY_CUES",
    "SYSTEM",
    "Answer",
    "AnswerParams",
    "Mode",
    "Prompt",
    "Request",
    "Source",
    "ThinkSplitter",
    "Unit",
    "answer_pool",
    "build_prompt",
    "citations",
    "cited_numbers",
    "extractive",
    "fit_prompt",
    "lead_text",
    "mode_of",
    "outline_summary",
    "neutralised",
    "passage",
    "stream",
    "supported_by",
    "units",
    "without_thinking",
]
