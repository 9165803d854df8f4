"""Documents found by title and file name: a small folder of PEP-style files, where the PEP that
mentions every other PEP must not win a question that names one."""

from __future__ import annotations

import pytest
from helpers import library_app

from ragchat.app import App
from ragchat.search.titles import question_terms
from ragchat.store.titles import name_words

PEPS = {
    "pep-0001.rst": """PEP: 1
Title: PEP Purpose and Guidelines
Status: Active
Type: Process

What is a PEP?
==============

PEP stands for Python Enhancement Proposal. A PEP is a design document providing information to
the Python community. PEP 8 is an example of an informational PEP and PEP 723 an example of a
standards track PEP. Each PEP has a number; PEP 20 and PEP 8 are among the oldest.

PEP Workflow
============

A PEP author drafts the PEP, discusses it, and submits it. The steering council accepts or rejects
the PEP. PEP 723 was discussed on the forum before it was accepted, like PEP 8 long before.
""",
    "pep-0008.rst": """PEP: 8
Title: Style Guide for Python Code
Status: Active
Type: Process

Introduction
============

This document gives coding conventions for the Python code comprising the standard library.
Use 4 spaces per indentation level. Limit all lines to a maximum of 79 characters.

Naming Conventions
==================

Function names should be lowercase, with words separated by underscores as necessary to improve
readability. Class names should normally use the CapWords convention.
""",
    "pep-0723.rst": """PEP: 723
Title: Inline script metadata
Status: Final
Type: Standards Track

Abstract
========

This specifies a metadata format that can be embedded in single-file Python scripts to assist
launchers, IDEs and other external tools which may need to interact with such scripts.

Specification
=============

Any Python script may have top-level comment blocks that start with the line ``# /// script``
and end with the line ``# ///``. The TOML block lists the dependencies and requires-python.
""",
    "pep-0020.rst": """PEP: 20
Title: The Zen of Python
Status: Active
Type: Informational

The Zen of Python
=================

Beautiful is better than ugly. Explicit is better than implicit. Simple is better than complex.
Readability counts. There should be one obvious way to do it.
""",
    "deployment-guide.md": """# Shipping the service

Build the container image, push it to the registry, then roll it out one replica at a time.
Watch the health checks during the rollout and roll back when they fail.
""",
}


@pytest.fixture(scope="module")
def peps(tmp_path_factory: pytest.TempPathFactory, embedder) -> App:
    root = tmp_path_factory.mktemp("peps")
    return library_app(root, PEPS, embedder)


def test_file_names_become_words_with_plain_numbers() -> None:
    assert name_words("peps/pep-0723.rst") == "pep 0723 723"
    assert name_words("deployment_guide.v2.md") == "deployment guide v 2"
    assert question_terms("What is PEP 0008 about?") == ["pep", "8"]


@pytest.mark.parametrize(
    ("question", "document"),
    [
        ("What is PEP 723 about?", "pep-0723.rst"),
        ("what is pep 8?", "pep-0008.rst"),
        ("the deployment guide", "deployment-guide.md"),
    ],
)
def test_a_question_naming_a_document_cites_it_first(
    peps: App, question: str, document: str
) -> None:
    result = peps.conversation(f"s-{question}").ask(question)
    assert result.lineage.chunks[0].document == document
    assert "question/title" in [q.name for q in result.lineage.queries]


def test_a_question_naming_no_document_adds_no_list(peps: App) -> None:
    result = peps.conversation("plain").ask("how should functions be named?")
    assert "question/title" not in [q.name for q in result.lineage.queries]
    assert result.lineage.chunks[0].document == "pep-0008.rst"


def test_search_finds_a_document_by_its_name_too(peps: App) -> None:
    from ragchat.search.hybrid import SearchRequest, search

    hits = search(peps.db, peps.embedder, peps.settings, SearchRequest("pep 723", "pep 723", k=3))
    assert hits[0].chunk.path == "pep-0723.rst"
