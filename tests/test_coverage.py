"""The "documents may not cover this" decision (issue 30, point 4) on covered and uncovered turns
alike: a follow-up is judged on the question as the turn read it (with its subject), and a
question whose distinctive words the library never holds is flagged even where both indexes
agree on the passages they return. A small documentation set written for these tests, the real
embedding model, SQLite with FTS5 and sqlite-vec."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ask_json, invoke, settings_for

from ragchat.embed import FastEmbedder
from ragchat.ingest.pipeline import ingest
from ragchat.store.db import open_db

PAGES = {
    "loops.md": """# Looping over rows

A Tidewater report holds its rows in `report.rows`. Walk them with an ordinary loop:

```python
for row in report.rows:
    print(row["amount"])
```

To stop the loop early, call `report.stop()` inside the loop body: the rows after it are skipped
and the totals are computed from the rows seen so far.

```python
for row in report.rows:
    if row["amount"] > 1000:
        report.stop()
```
""",
    "filtering.md": """# Filtering rows

`report.where(column, value)` keeps the rows whose column holds the value and returns a new
report; the original report is unchanged.

```python
paid = report.where("status", "paid")
```

Several conditions chain: `report.where("status", "paid").where("region", "north")`.
""",
    "deleting.md": """# Deleting rows

`report.remove(row_id)` deletes one row from a report by its id and returns the removed row.
Removing a row that does not exist raises `MissingRow`.

```python
gone = report.remove(42)
```

To delete every row matching a condition, use `report.purge(column, value)`.
""",
    "exporting.md": """# Exporting reports

A report is written to a spreadsheet with `report.save("out.xlsx")` and to comma-separated text
with `report.save("out.csv")`. The file type follows the extension. Column widths are kept.
""",
    "installing.md": """# Installing Tidewater

Tidewater needs Python 3.10 or later. Install it with `pip install tidewater`; the optional
spreadsheet support comes with `pip install tidewater[xlsx]`.
""",
    "charts.md": """# Charts

`report.chart("bar", x="month", y="amount")` draws a bar chart of two columns; `"line"` and
`"pie"` are the other kinds. Charts are saved next to the report with `chart.save("chart.png")`.
""",
}


@pytest.fixture(scope="module")
def tidewater(tmp_path_factory: pytest.TempPathFactory, embedder: FastEmbedder) -> Path:
    folder = tmp_path_factory.mktemp("tidewater") / "docs"
    folder.mkdir()
    for name, text in PAGES.items():
        (folder / name).write_text(text)
    path = folder.parent / "tidewater.db"
    db = open_db(path)
    ingest(db, settings_for(path), [folder], lambda: embedder)
    db.close()
    return path


def test_follow_ups_are_judged_with_their_subject_covered_or_not(tidewater: Path, runner) -> None:
    """ "can I stop it early?" finds little alone (its own best cosine is low); read with its
    subject, the loop, it comes close to the page that answers it: not flagged. "can it
    translate the rows into Japanese?" has a covered subject too, but translating is nowhere in
    the library: the subject lifts the question's closeness, not the share of its own
    distinctive words the passages hold."""
    first = ask_json(runner, tidewater, "f1", "how do I loop over the rows of a tidewater report?")
    assert not first["weak_match"]
    covered = ask_json(runner, tidewater, "f1", "can I stop it early?")
    assert covered["reformulation"]["is_follow_up"] and covered["plan"] == "anchored_search"
    assert not covered["weak_match"] and "may not cover" not in covered["answer"]
    assert "report.stop()" in covered["answer"]
    evidence = covered["coverage"]
    assert evidence["subject"] > evidence["best"] + 0.2, "judged on the question with its subject"

    ask_json(runner, tidewater, "f2", "how do I filter rows in a tidewater report?")
    uncovered = ask_json(runner, tidewater, "f2", "can it translate the rows into Japanese?")
    assert uncovered["plan"] == "anchored_search"
    assert uncovered["weak_match"] and "may not cover" in uncovered["answer"]


def test_a_question_about_what_the_library_never_mentions_is_flagged(
    tidewater: Path, runner
) -> None:
    """Both indexes agree on the filtering page, but "regular expression" is nowhere in the
    library: agreement between the lists is no evidence that the library answers it."""
    turn = ask_json(
        runner, tidewater, "u1", "can I filter rows of a report with a regular expression?"
    )
    assert turn["coverage"]["agreement"] >= 0.5 and turn["coverage"]["rare"] < 0.5
    assert turn["weak_match"] and "may not cover" in turn["answer"]


def test_a_name_the_library_never_mentions_is_said_beside_the_answer(
    tidewater: Path, runner
) -> None:
    """ "parquet" is nowhere in the library, and the embedding model knows it only in pieces: a
    name, not an everyday word. The exporting page is close to the question (saving a report to
    a file) and holds its words: the not-covered decision stays as it was (as a decision, such
    names lowered MTRAG's precision), but the user is told the documents never name it."""
    turn = ask_json(runner, tidewater, "n1", "can I save a tidewater report as a parquet file?")
    assert turn["coverage"]["unknown"] == ["parquet"]
    assert not turn["weak_match"] and "may not cover" not in turn["answer"]
    assert 'nothing in the documents mentions "parquet"' in turn["notices"]
    assert 'report.save("out.xlsx")' in turn["answer"]


def test_everyday_words_and_the_users_own_names_are_not_names_the_library_lacks(
    tidewater: Path, runner
) -> None:
    """ "quickly" is nowhere in the library either, but the model knows it whole: an everyday
    word; "MonthlySales", with capitals inside, is as likely the user's own class as a product."""
    turn = ask_json(
        runner, tidewater, "n2", "how do I quickly save my MonthlySales report to a csv file?"
    )
    assert "unknown" not in turn["coverage"]
    assert not any("nothing in the documents mentions" in n for n in turn["notices"])
    assert 'report.save("out.csv")' in turn["answer"]


def test_the_chat_says_which_names_the_documents_never_mention(tidewater: Path, runner) -> None:
    """In the terminal the note is a notice line of its own, before the answer; `search` says it
    too."""
    result = invoke(runner, "ask", "can I export the report to datadog?", "--db", tidewater)
    assert result.exit_code == 0
    assert '! nothing in the documents mentions "datadog"' in result.output
    found = invoke(runner, "search", "report export to datadog", "--db", tidewater)
    assert '! nothing in the documents mentions "datadog"' in found.output
