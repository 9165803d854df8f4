"""`ragchat eval`: replay conversation sets through the chat's own turn pipeline and score what
each turn retrieved, at file level, against gold files.

Every item is replayed in a fresh session per strategy with `Conversation.ask` (the same code the
chat runs). A turn's recorded `assistant` text is stored as the reply, with the lineage of what the
pipeline retrieved, so the next turn anchors as in a live chat. A turn without `assistant` stores
an empty reply: nothing was answered, so the next turn has no anchors from it.

The package, in the order a run uses it:
- `sets`: reading and validating a conversation set; the library it searches;
- `strategies`: what is replayed: `ragchat`, its ablations, the baselines, the oracle;
- `runs`: every item through `Conversation.ask` per strategy, each scored turn a row;
- `metrics`: file-level Recall@k, MRR, nDCG (pure);
- `report`: the summaries per group, the paired sign test, the answer-quality tables;
- `answers`: answer quality (`--answers`) against references, with the lead and oracle yardsticks;
- `coverage`: the not-covered decision on unanswerable items;
- `replayed`: models replayed through the real Ollama path (recorded, echo, drift, flip).
"""

from .coverage import coverage_score, replay_unanswerable
from .metrics import parse_ks
from .report import parse_group, summarize, summarize_answers
from .runs import replay, write_rows
from .sets import database_path, load_conversations, missing_gold, prepare_library
from .strategies import choose_strategies

# what `ragchat eval` calls, in the order it calls it
__all__ = [
    "load_conversations",
    "choose_strategies",
    "parse_ks",
    "parse_group",
    "database_path",
    "prepare_library",
    "missing_gold",
    "replay",
    "coverage_score",
    "replay_unanswerable",
    "summarize",
    "summarize_answers",
    "write_rows",
]
