"""The answer's tuning numbers, `AnswerParams`, are declared with the others in ragchat/params.py
(`Params.answer`, so `ragchat eval --param answer.pool=3` runs with another value).
`ANSWER_PARAMS` is the default, for the answer package's functions called without settings."""

from __future__ import annotations

from ..params import DEFAULT, AnswerParams

ANSWER_PARAMS = DEFAULT.answer

__all__ = ["ANSWER_PARAMS", "AnswerParams"]
