"""The follow-up detector without a model: cues -> referent and terms -> need for context ->
queries. `ragchat/lexicon.py` holds its English, `ragchat/params.py` its numbers."""
