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
)
from .params import ANSWER_PARAMS, AnswerParams
from .prompt import CITATION, SYSTEM, Source, build_prompt, cited_numbers, passage
from .support import stream, supported_by
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
    "Request",
    "Source",
    "Unit",
    "answer_pool",
    "build_prompt",
    "cited_numbers",
    "extractive",
    "lead_text",
    "mode_of",
    "passage",
    "stream",
    "supported_by",
    "units",
]
