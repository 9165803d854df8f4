"""The follow-up detector without a model: cues -> referent and terms -> need for context ->
queries. `lexicon.py` holds its English, `ragchat/params.py` its numbers.

Nothing is imported here: `lexicon` is read by `text.py` and the search code too, and must load
without the rest of the package.
"""
