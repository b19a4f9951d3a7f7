"""TSDoc links and block tags in descriptions, rendered as plain text."""

from __future__ import annotations

from mcp_specgen.tsdoc import render_tsdoc

NAMES = ("CallToolRequest", "Tool", "InputRequest", "InputRequests", "MetaObject")


def test_a_bare_link_becomes_the_name_in_backticks() -> None:
    assert render_tsdoc("except for {@link Tool}, where", NAMES) == (
        "except for `Tool`, where"
    )


def test_a_labelled_link_becomes_its_label() -> None:
    assert render_tsdoc("see {@link Tool | the tool type}.", NAMES) == (
        "see the tool type."
    )
    assert render_tsdoc("see {@link Tool the tool type}.", NAMES) == (
        "see the tool type."
    )


def test_a_one_word_label_reads_as_code() -> None:
    assert render_tsdoc("a {@link CallToolRequest | tools/call} request") == (
        "a `tools/call` request"
    )


def test_a_label_glued_to_its_target_is_split_by_the_schema_names() -> None:
    text = (
        "a {@link CallToolRequesttools/call} request, {@link MetaObject`_meta` rules}"
    )
    assert render_tsdoc(text, NAMES) == "a `tools/call` request, `_meta` rules"


def test_the_longest_name_wins_and_a_member_path_stays_whole() -> None:
    assert render_tsdoc("{@link InputRequests}", NAMES) == "`InputRequests`"
    assert render_tsdoc("{@link Tool.inputSchema}", NAMES) == "`Tool.inputSchema`"


def test_linkcode_and_linkplain_are_links_too() -> None:
    assert render_tsdoc("{@linkcode Tool} and {@linkplain Tool | the tool}", NAMES) == (
        "`Tool` and the tool"
    )


def test_see_deprecated_and_default_become_labelled_paragraphs() -> None:
    text = "Summary.\n@see {@link Tool}\n@deprecated Use X.\n@default 5\n@internal"
    assert render_tsdoc(text, NAMES) == (
        "Summary.\n\nSee: `Tool`\n\nDeprecated: Use X.\n\nDefault: 5\n"
    )


def test_an_unknown_tag_keeps_its_text_under_its_name() -> None:
    assert render_tsdoc("@since 2025-06-18") == "Since: 2025-06-18"
    assert render_tsdoc("@beta") == "Beta."


def test_remarks_keep_their_text_without_the_tag() -> None:
    assert render_tsdoc("Short.\n@remarks Longer text.") == "Short.\n\nLonger text."


def test_an_example_becomes_an_indented_block_without_fences() -> None:
    text = "Summary.\n@example Calling it\n```ts\nconst x = 1;\n\nf(x);\n```"
    assert render_tsdoc(text) == (
        "Summary.\n\nExample: Calling it\n\n    const x = 1;\n\n    f(x);"
    )


def test_text_without_markup_is_unchanged() -> None:
    text = "An email like a@b.c and\n- a list"
    assert render_tsdoc(text, NAMES) == text
