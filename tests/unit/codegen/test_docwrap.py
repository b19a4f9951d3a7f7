"""Description text wrapped as paragraphs and lists for a docstring."""

from __future__ import annotations

from mcp_specgen.docwrap import wrap_description


def test_a_paragraph_broken_mid_sentence_is_refilled() -> None:
    text = "alongside `type` — including\ncomposition keywords and any other\nkeywords."
    assert wrap_description(text, 80) == (
        "alongside `type` — including composition keywords and any other keywords."
    )


def test_a_long_paragraph_wraps_at_the_width() -> None:
    wrapped = wrap_description("word " * 40, 30)
    assert all(len(line) <= 30 for line in wrapped.splitlines())
    assert wrapped.split() == ["word"] * 40


def test_a_list_item_never_joins_the_line_before_it() -> None:
    text = "Standard values:\n- `a`: first\n- `b`: second"
    assert wrap_description(text, 80) == text


def test_a_list_item_continuation_joins_the_item_with_a_hanging_indent() -> None:
    text = (
        "- If 0, the response is stale,\n"
        "  the client may re-fetch it every time it is needed."
    )
    assert wrap_description(text, 40) == (
        "- If 0, the response is stale, the\n"
        "  client may re-fetch it every time it\n"
        "  is needed."
    )


def test_numbered_items_and_nested_items_keep_their_markers() -> None:
    text = "1. first\n2. second\n  - nested\n    continued"
    assert wrap_description(text, 80) == "1. first\n2. second\n  - nested continued"


def test_a_line_after_a_list_starts_a_paragraph() -> None:
    text = "- item\nAfter the list,\nwrapped early."
    assert wrap_description(text, 80) == "- item\nAfter the list, wrapped early."


def test_blank_lines_separate_paragraphs_once() -> None:
    assert wrap_description("one\n\n\n\ntwo\n\n", 80) == "one\n\ntwo"


def test_code_fences_tables_and_indented_code_are_kept() -> None:
    text = (
        'Intro:\n\n```json\n{"a":   1,\n "b": 2}\n```\n\n'
        "| a | b |\n|---|---|\n\n    indented   code\n    more"
    )
    assert wrap_description(text, 10) == (
        'Intro:\n\n```json\n{"a":   1,\n "b": 2}\n```\n\n'
        "| a | b |\n|---|---|\n\n    indented   code\n    more"
    )


def test_a_long_word_is_never_broken() -> None:
    url = "https://example.com/" + "a" * 100
    assert wrap_description(f"see {url}", 40) == f"see\n{url}"
