"""Answers that carry the how-to (issue 30): the lead-in with the code it introduces, chosen for
the question's words; console runs only when asked about; no bare block, no sentence cut at its
front, no block twice; a follow-up leads with what is new; meta-requests by their shape."""

from __future__ import annotations

import pytest
from helpers import flat_idf, source

from ragchat.answer import Mode, Request, extractive, mode_of, units
from ragchat.conversation.followup.cues import is_meta_request, meta_subject
from ragchat.params import DEFAULT
from ragchat.text import code_names


def pick(query: str, texts: list[str], mode: Mode = Mode.QUESTION, **fields: object) -> str:
    sources = [source(i, text) for i, text in enumerate(texts, 1)]
    return extractive(mode, Request(query, sources, **fields), flat_idf, params=DEFAULT.answer).text  # type: ignore[arg-type]


CALLBACK = """The version option is an option that prints the version of the program.
It is useful for users who want to know which version of the program and its parts they have.

To print the version and quit, declare a callback for the option and raise typer.Exit in it:

```python
def version_callback(value: bool):
    if value:
        print("Awesome CLI Version: 0.1.0")
        raise typer.Exit()

@app.command()
def main(version: bool = typer.Option(False, "--version", callback=version_callback)):
    pass
```

Check it:

```console
$ python main.py --version
Awesome CLI Version: 0.1.0
$ python main.py --versoin
Error: No such option: --versoin
```
"""


HOW_TO = """To print the version and quit, declare a function for the option like this:

```python
import typer

app = typer.Typer()

def version_callback(value: bool):
    if value:
        print("Awesome CLI Version: 0.1.0")
        raise typer.Exit()

@app.command()
def main(
    name: str = typer.Option("World"),
    version: bool = typer.Option(None, "--version", callback=version_callback, is_eager=True),
):
    print(f"Hello {name}")
```

Callbacks can raise errors before the command runs.
"""


def test_the_lead_in_with_its_code_answers_a_how_to_question() -> None:
    # the code's identifiers match the question's, and its length does not count as a long
    # sentence's would: the lead-in with the code beats a short sentence sharing two words
    answer = pick("how do I raise typer.Exit from the callback?", [HOW_TO], count=1)
    assert answer.startswith("To print the version and quit") and "raise typer.Exit()" in answer


def test_a_console_run_is_left_out_unless_the_question_asks_about_what_it_printed() -> None:
    answer = pick("how do I add a version option that prints the version?", [CALLBACK], count=4)
    assert "$ python main.py" not in answer and "Check it" not in answer
    asked = pick("why do I get the error no such option?", [CALLBACK], count=4)
    assert "$ python main.py --version" in asked


SIGNED = """Sign a string with a signer and check it again with unsign:

```python
s = Signer("secret-key")
s.sign("my string")
```

If the value is changed, the signature will no longer match, and unsigning will raise an error:

```python
s.unsign(b"different string.wh6tMHxLgJqB6oY1uT73iMlyrOA")
Traceback (most recent call last):
  ...
BadSignature: Signature does not match
```
"""


def test_the_error_a_sentence_says_its_code_raises_answers_what_that_sentence_answers() -> None:
    # the question shares no word with the printed error, but with the sentence that brings it
    answer = pick("what if somebody changed the value?", [SIGNED], count=2)
    assert "If the value is changed" in answer
    assert "BadSignature: Signature does not match" in answer
    # a question the sentence does not answer never gets the traceback
    assert "Traceback" not in pick("how do I sign a string?", [SIGNED], count=2)


def test_a_line_without_a_full_stop_introduces_the_python_session_after_it() -> None:
    text = (
        "For a list of formatting values, see Supported Tokens\n\n"
        "```python\n>>> arrow.utcnow().format('YYYY-MM-DD HH:mm:ss ZZ')\n"
        "'2013-05-07 05:23:16 -00:00'\n```"
    )
    (unit,) = units(text, params=DEFAULT.answer)
    assert unit.sentence.startswith("For a list of formatting values") and unit.is_session
    answer = pick("how do I format an arrow as text with formatting values?", [text])
    assert "arrow.utcnow().format(" in answer


TIMED = """If you want to expire signatures you can use the TimestampSigner class, and on
unsigning validate that the timestamp is not older than a given age.

```python
s = TimestampSigner('secret-key')
string = s.sign('foo')
```

```python
s.unsign(string, max_age=5)
Traceback (most recent call last):
  ...
itsdangerous.exc.SignatureExpired: Signature age 15 > 5 seconds
```
"""


def test_the_code_and_the_error_it_raises_go_on_with_the_sentence_that_brings_them() -> None:
    (unit,) = units(TIMED, params=DEFAULT.answer)
    assert "s.sign('foo')" in unit.block and "SignatureExpired" in unit.block
    answer = pick("how do I make the signature expire after an age?", [TIMED])
    assert "s.unsign(string, max_age=5)" in answer
    # a Python session after the one a sentence brings goes on with it too
    session = "Shift a date into the past:\n\n```python\n>>> a = arrow.utcnow()\n```\n\n"
    session += "```python\n>>> a.shift(weeks=-3)\n<Arrow [2013-04-16]>\n```"
    (shifted,) = units(session, params=DEFAULT.answer)
    assert "a.shift(weeks=-3)" in shifted.block


def test_a_sentence_holding_a_lead_ins_few_words_is_no_repeat_of_it() -> None:
    # "On Windows:" with its commands is in; "--global is not supported on Windows." says more
    # than those two words, so it comes too (it used to be dropped as a near-repeat of the lead-in)
    text = (
        "On Windows:\n\n```\nscoop install pipx\npipx ensurepath\n```\n\n"
        "The --global flag installs into a system-wide location for all users. "
        "--global is not supported on Windows."
    )
    answer = pick("install pipx global on windows", [text], count=4)
    assert "scoop install pipx" in answer and "--global is not supported on Windows." in answer


def test_a_console_block_is_told_by_its_shape() -> None:
    code, console = [u for u in units(CALLBACK, params=DEFAULT.answer) if u.block]
    assert console.is_console and console.output.startswith("Awesome CLI")
    assert not code.is_console
    traceback = units(
        "It fails:\n\n```\nTraceback (most recent call last):\n  x\n```", params=DEFAULT.answer
    )[0]
    assert traceback.is_console


def test_a_block_without_its_lead_in_is_not_an_answer_to_a_question() -> None:
    text = "```python\nclient.close()\n```\n\nClose the client when you are done with it."
    answer = pick("close the client", [text])
    assert "```" not in answer and "Close the client" in answer


def test_a_sentence_cut_at_its_front_is_never_shown() -> None:
    text = (
        "Tests are collected from the test folder.\n\n"
        "you can force the running of marked tests with the command line flag."
    )
    found = units(text, params=DEFAULT.answer)
    assert found[1].kind == "fragment"
    assert "you can force" not in pick("force running marked tests flag", [text])


def test_the_same_code_block_is_never_shown_twice() -> None:
    block = "```python\nenv = Environment(autoescape=True)\n```"
    first = f"Turn autoescaping on like this:\n\n{block}"
    second = f"To escape every template by default, create the environment so:\n\n{block}"
    answer = pick("autoescape environment escape templates default", [first, second], count=4)
    assert answer.count("Environment(autoescape=True)") == 1


PROMPTS = """Use typer.prompt to ask the user for a value in the middle of a command.

Use typer.confirm to ask for a confirmation, with abort=True to stop the command on a no.
"""


def test_a_follow_up_leads_with_what_is_new_not_with_the_last_answer() -> None:
    first = pick("ask the user for a value in the middle of a command", [PROMPTS], count=1)
    assert "typer.prompt" in first
    again = pick("and confirming the command, abort when they say no?", [PROMPTS], count=2,
                 said=first)  # fmt: skip
    assert "typer.confirm" in again and "typer.prompt" not in again


def test_what_was_shown_comes_again_when_it_is_the_answer_itself() -> None:
    first = pick("ask the user for a value", [PROMPTS], count=1)
    again = pick("how do I ask the user for a value?", [PROMPTS.splitlines()[0]], count=1,
                 said=first)  # fmt: skip
    assert "typer.prompt" in again


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("give me an example", ""),
        ("give me an example in Python", "python"),
        ("show me the code for that", ""),
        ("code for that?", ""),
        ("an example with nested groups?", "nested groups"),
        ("summarize the templates page", "templates"),
        ("that page goes on forever, summarize the precedence part", "precedence"),
        ("tell me more about lazy loading", "lazy loading"),
        ("example please", ""),
    ],
)
def test_a_meta_request_is_read_by_its_shape_with_an_optional_subject(
    question: str, subject: str
) -> None:
    assert meta_subject(question) == subject


@pytest.mark.parametrize(
    "question", ["code review tips?", "how do I show help text?", "what is an example of a loader?"]
)
def test_a_question_that_only_uses_a_request_word_is_no_meta_request(question: str) -> None:
    assert meta_subject(question) is None and not is_meta_request(question)


def test_a_request_for_code_is_an_example_request() -> None:
    assert mode_of("show me the code for that", meta=True) is Mode.EXAMPLE
    assert mode_of("show me the python side of that", meta=True) is Mode.EXAMPLE
    assert mode_of("summarize the security advice", meta=True) is Mode.SUMMARY


HELP_DUMP = """The help of the command lists every option with its description.

```console
$ python main.py --help
Usage: main.py [OPTIONS]
  --name TEXT  The name to greet.
  --help       Show this message and exit.
```

Options are declared as function parameters with typer.Option.

Each option gets its help text from the help argument of typer.Option.
"""


def test_a_summary_is_never_a_raw_console_dump() -> None:
    answer = pick("summarize it", [HELP_DUMP], mode=Mode.SUMMARY, count=3, cover=[1])
    assert "Usage:" not in answer and "typer.Option" in answer


POINTING = """Loops in templates iterate over any sequence the context holds.

Inside a loop, some helpers are available:

```jinja
{% for user in users %}{{ loop.index }} {{ user }}{% endfor %}
```

These two lines show how the loop variable counts the users.
"""


def test_a_sentence_pointing_at_a_block_brings_the_block() -> None:
    answer = pick("how does the loop variable count users?", [POINTING], count=1)
    assert "These two lines" in answer and "{{ loop.index }}" in answer


def test_a_second_block_after_the_first_goes_with_its_lead_in() -> None:
    text = (
        "Write the command and its test:\n\n```python\ndef sync(): ...\n```\n\n"
        "```python\nfrom click.testing import CliRunner\n```\n\nUnrelated closing words here."
    )
    (first, *_) = units(text, params=DEFAULT.answer)
    assert "def sync" in first.block and "CliRunner" in first.block
    assert "CliRunner" in pick("test the sync command", [text], count=1)


def test_a_summary_is_made_of_sentences_not_code() -> None:
    text = (
        "Schemas declare fields.\n\nLoad a schema like this:\n\n```python\nschema = UserSchema()\n"
        "schema.load(data)\nschema.dump(user)\n```\n\nA schema validates data when it loads it."
    )
    answer = pick("summarize it", [text, text], mode=Mode.SUMMARY, count=3, cover=[1, 2])
    assert "```" not in answer and "validates data" in answer


INSTALL = """We provide a custom installer that keeps the tool in its own environment.

The installer script is available at example.org and is developed in its own repository. The
script can be executed directly or downloaded and then executed from disk.

Linux, macOS

```bash
curl -sSL https://install.example.org | python3 -
```

Windows

```powershell
(Invoke-WebRequest -Uri https://install.example.org).Content | py -
```

Note

If you installed Python through the Microsoft Store, replace py with python in the command above.
"""


def test_tab_labels_between_the_lead_in_and_its_code_keep_them_one_unit() -> None:
    """Tabs (a platform's name, then its code, twice or more) between the sentence and its
    code: the code keeps its lead-in and its labels, so the install command is what the answer
    shows."""
    shown = [u for u in units(INSTALL, params=DEFAULT.answer) if u.has_code]
    assert len(shown) == 1 and shown[0].sentence.endswith("executed from disk. Linux, macOS:")
    assert "Windows:\n```powershell" in shown[0].block
    answer = pick("how do I install the tool?", [INSTALL])
    assert "curl -sSL https://install.example.org | python3 -" in answer


SAFETY = """The cache is not thread safe by itself: many threads reading and writing the cache
at once may corrupt the cache, so a thread safe cache needs the threads to take turns.
"""

LOCKS = """Pass a lock to guard it:

```python
@cached(cache=LRUCache(maxsize=32), lock=threading.Lock())
def get_page(url):
    return fetch(url)
```
"""


def test_the_code_shown_before_comes_again_when_it_holds_what_was_just_asked() -> None:
    first = pick("guard it with a lock", [LOCKS, SAFETY], count=1)
    assert "lock=threading.Lock()" in first and "corrupt" not in first
    asked = "so how do I pass a lock to the decorator"
    again = pick(f"{asked} (thread safe cache threads reading writing corrupt)", [SAFETY, LOCKS],
                 count=2, said=first, asked=asked)  # fmt: skip
    assert "lock=threading.Lock()" in again
    assert again.index("corrupt") < again.index("Pass a lock")  # what is new leads


CONNECTING = """Connect with `database.connect()` before the first query.

```python
database = Database("sqlite:///example.db")
await database.connect()
rows = await database.fetch_all("SELECT * FROM notes")
```

The connection takes options for SSL and for the size of the pool:

```python
database = Database("postgresql://localhost/example", ssl=True, min_size=5)
```
"""


def test_an_example_of_a_subject_is_the_one_shown_before_when_it_is_that_subject() -> None:
    first = pick("how do I connect and run a query?", [CONNECTING], count=1)
    assert "fetch_all" in first and "min_size" not in first
    again = pick("connect run query", [CONNECTING], Mode.EXAMPLE, count=1, exclude=first,
                 subject="connect run query")  # fmt: skip
    assert "fetch_all" in again
    other = pick("pool size", [CONNECTING], Mode.EXAMPLE, count=1, exclude=first,
                 subject="pool size")  # fmt: skip
    assert "min_size" in other and "fetch_all" not in other


ALEMBIC = """Migrations use a standard synchronous database driver. For MySQL you will need the
pymysql dialect when using Alembic. If you keep the address in a settings object, you can obtain
it using DATABASE_URL.replace(dialect="pymysql"). Alembic reads its settings from env.py.
"""


def test_the_sentence_naming_the_code_comes_with_the_one_before_it() -> None:
    answer = pick("mysql alembic", [ALEMBIC], count=1)
    assert "For MySQL you will need the pymysql dialect" in answer
    assert 'DATABASE_URL.replace(dialect="pymysql")' in answer
    assert answer.index("For MySQL") < answer.index("DATABASE_URL")
    assert "env.py" not in answer  # a sentence naming no code stays where the ranking puts it


@pytest.mark.parametrize(
    ("sentence", "names"),
    [
        ("try setting pool_recycle in the engine options", {"pool_recycle"}),
        ("binds are given in SQLALCHEMY_BINDS, a dict", {"sqlalchemy_binds"}),
        ("see the --include-apps option", {"--include-apps"}),
        ("call obj.method(1) or fetch() first, not -n", {"obj.method", "fetch"}),
        ("pin to requests<2.28 (see above), e.g. version 3.5 of the U.S. site", set()),
        ("visit www.example.com for a well-known, self-signed API key", set()),
        ("the parent or legal guardian(s) of FDA-approved and -authorized vaccines", set()),
        ("see nasa.gov on an iPhone, not variants.Those or guardian(s)", set()),
        ("pass Session.get(url), not cli.py", {"session.get"}),
    ],
)
def test_names_in_code_shape_are_told_from_prose(sentence: str, names: set[str]) -> None:
    assert code_names(sentence) == names
