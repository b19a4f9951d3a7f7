"""Server-Sent Events: `encode_event` and the incremental `SSEParser` (WHATWG
event stream interpretation, chunk boundaries anywhere, bounded memory)."""

from __future__ import annotations

import pytest

from mcp_specgen_runtime.errors import MessageTooLargeError
from mcp_specgen_runtime.transports.http import (
    DEFAULT_MAX_EVENT_SIZE,
    Event,
    EventTooLongError,
    SSEParser,
    encode_comment,
    encode_event,
)


def parse(
    chunks: list[bytes], parser: SSEParser | None = None
) -> tuple[list[Event], int]:
    """Every event of the chunks, and how many over-long events were skipped."""
    parser = parser or SSEParser()
    events: list[Event] = []
    skipped = 0
    for chunk in chunks:
        try:
            events.extend(parser.feed(chunk))
        except EventTooLongError as exc:
            events.extend(exc.events)
            skipped += exc.skipped
    return events, skipped


def bytewise(stream: bytes) -> list[bytes]:
    return [stream[i : i + 1] for i in range(len(stream))]


def splits(stream: bytes) -> list[list[bytes]]:
    """The stream whole, byte by byte, and cut in two at every position."""
    cuts = [[stream[:i], stream[i:]] for i in range(1, len(stream))]
    return [[stream], bytewise(stream), *cuts]


def events_of(stream: bytes, **options: int) -> list[Event]:
    """The events of `stream`, checked to be the same however it is chunked."""
    results = {
        tuple(parse(chunks, SSEParser(**options))[0]) for chunks in splits(stream)
    }
    assert len(results) == 1, results
    return list(results.pop())


# --- encoding -------------------------------------------------------------------


def test_encode_a_message() -> None:
    assert encode_event(b'{"jsonrpc":"2.0"}') == b'data: {"jsonrpc":"2.0"}\n\n'


def test_encode_every_field() -> None:
    encoded = encode_event(b"x", event="message", id="42", retry_ms=1500)
    assert encoded == b"event: message\nid: 42\nretry: 1500\ndata: x\n\n"


def test_encode_an_empty_data_field() -> None:
    assert encode_event(b"", id="prime") == b"id: prime\ndata:\n\n"
    assert events_of(encode_event(b"", id="prime")) == [Event(b"", "message", "prime")]


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"a\nb", [b"data: a", b"data: b"]),
        (b"a\r\nb", [b"data: a", b"data: b"]),
        (b"a\rb", [b"data: a", b"data: b"]),
        (b"a\n", [b"data: a", b"data:"]),
        (b"\n\n", [b"data:", b"data:", b"data:"]),
        (b" lead", [b"data:  lead"]),
        (b"a\r\rb", [b"data: a", b"data:", b"data: b"]),
    ],
)
def test_encode_splits_data_on_every_line_ending(
    data: bytes, lines: list[bytes]
) -> None:
    encoded = encode_event(data)
    assert encoded == b"\n".join(lines) + b"\n\n"
    expected = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    assert events_of(encoded) == [Event(expected)]


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\r\n", "\n"])
def test_encode_refuses_line_breaks_in_event_and_id(value: str) -> None:
    with pytest.raises(ValueError, match="CR or LF"):
        encode_event(b"x", event=value)
    with pytest.raises(ValueError, match="CR or LF"):
        encode_event(b"x", id=value)


def test_encode_refuses_nul_in_ids_and_negative_retries() -> None:
    with pytest.raises(ValueError, match="NUL"):
        encode_event(b"x", id="a\0b")
    with pytest.raises(ValueError, match="retry_ms"):
        encode_event(b"x", retry_ms=-1)
    assert encode_event(b"x", retry_ms=0).startswith(b"retry: 0\n")


def test_encode_round_trips_unicode_names_and_ids() -> None:
    encoded = encode_event("données".encode(), event="évènement", id="ид-1")
    assert events_of(encoded) == [Event("données".encode(), "évènement", "ид-1")]


def test_encode_comment() -> None:
    assert encode_comment() == b":\n\n"
    assert encode_comment("keep-alive") == b": keep-alive\n\n"
    assert events_of(encode_comment("ping")) == []
    with pytest.raises(ValueError, match="CR or LF"):
        encode_comment("a\ndata: injected")


def test_many_encoded_events_parse_back() -> None:
    payloads = [b"{}", b"", b"a\nb", b"x" * 1000]
    stream = b"".join(
        encode_event(p, id=str(i), event="message" if i % 2 else None)
        for i, p in enumerate(payloads)
    )
    assert [e.data for e in events_of(stream)] == payloads
    assert [e.id for e in events_of(stream)] == ["0", "1", "2", "3"]


# --- parsing --------------------------------------------------------------------


@pytest.mark.parametrize(
    "stream",
    [
        b"data: x\n\n",
        b"data: x\r\n\r\n",
        b"data: x\r\r",
        b"data: x\r\n\n",
        b"data: x\n\r",
        b"data:x\n\n",
    ],
)
def test_every_line_ending(stream: bytes) -> None:
    assert events_of(stream) == [Event(b"x")]


def test_a_cr_then_a_new_line_is_not_a_crlf() -> None:
    assert events_of(b"data: a\rdata: b\r\r") == [Event(b"a\nb")]
    assert events_of(b"data: a\r\rdata: b\r\n\r\n") == [Event(b"a"), Event(b"b")]


def test_multi_line_data_joins_with_lf() -> None:
    stream = b"data: one\ndata: two\r\ndata:\rdata: four\n\n"
    assert events_of(stream) == [Event(b"one\ntwo\n\nfour")]


def test_only_one_space_after_the_colon_is_dropped() -> None:
    assert events_of(b"data:  two\n\n") == [Event(b" two")]
    assert events_of(b"data:\tx\n\n") == [Event(b"\tx")]
    assert events_of(b"data: a: b\n\n") == [Event(b"a: b")]


def test_a_field_without_a_colon_has_an_empty_value() -> None:
    assert events_of(b"data\n\n") == [Event(b"")]
    assert events_of(b"data\ndata\n\n") == [Event(b"\n")]
    assert events_of(b"event\ndata: x\n\n") == [Event(b"x")]


def test_comments_and_unknown_fields_are_ignored() -> None:
    stream = b": comment\n:\nfoo: bar\nDATA: no\ndata : no\ndata: yes\n\n"
    assert events_of(stream) == [Event(b"yes")]


def test_blank_lines_without_data_dispatch_nothing() -> None:
    assert events_of(b"\n\n\r\n\r") == []
    assert events_of(b"event: ping\n\ndata: x\n\n") == [Event(b"x")]


def test_event_types() -> None:
    stream = b"event: endpoint\ndata: /messages\n\ndata: next\n\n"
    assert events_of(stream) == [Event(b"/messages", "endpoint"), Event(b"next")]
    assert events_of(b"event:\ndata: x\n\n") == [Event(b"x", "message")]
    assert events_of(b"event: a\nevent: b\ndata: x\n\n") == [Event(b"x", "b")]


def test_ids_persist_until_changed_or_reset() -> None:
    stream = (
        b"id: 1\ndata: a\n\n"
        b"data: b\n\n"
        b"id: 2\n\n"  # no data: nothing dispatched, the id still counts
        b"data: c\n\n"
        b"id\ndata: d\n\n"  # an empty id resets it
        b"id: bad\0id\ndata: e\n\n"  # an id holding NUL is ignored
    )
    assert [(e.data, e.id) for e in events_of(stream)] == [
        (b"a", "1"),
        (b"b", "1"),
        (b"c", "2"),
        (b"d", ""),
        (b"e", ""),
    ]


def test_the_last_event_id_changes_at_the_blank_line() -> None:
    parser = SSEParser()
    assert parser.last_event_id == ""
    assert parser.feed(b"id: 7\ndata: x\n") == []
    assert parser.last_event_id == ""
    assert parser.feed(b"\n") == [Event(b"x", id="7")]
    assert parser.last_event_id == "7"
    parser.feed(b"id: 8\n\n")
    assert parser.last_event_id == "8"


def test_retry_takes_ascii_digits_only() -> None:
    parser = SSEParser()
    assert parser.retry_ms is None
    parser.feed(b"retry: 1500\n\n")
    assert parser.retry_ms == 1500
    for ignored in (b"retry: 1.5\n", b"retry: -1\n", b"retry:\n", b"retry:  10\n"):
        parser.feed(ignored)
        assert parser.retry_ms == 1500
    parser.feed("retry: ١٢\n".encode())
    assert parser.retry_ms == 1500
    parser.feed(b"retry: 0\n")
    assert parser.retry_ms == 0


def test_a_retry_line_does_not_start_an_event() -> None:
    parser = SSEParser()
    parser.feed(b"retry: 10\n")
    assert not parser.in_event


def test_names_and_ids_decode_with_replacement_and_data_stays_bytes() -> None:
    assert events_of(b"event: \xff\nid: \xfe\ndata: \xfd\n\n") == [
        Event(b"\xfd", "\ufffd", "\ufffd")
    ]


def test_a_leading_byte_order_mark_is_dropped_once() -> None:
    assert events_of(b"\xef\xbb\xbfdata: x\n\n") == [Event(b"x")]
    # A second mark makes the first line's field name unknown.
    assert events_of(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n") == [Event(b"y")]
    # Later in the stream it is not a mark.
    assert events_of(b"data: x\n\n\xef\xbb\xbfdata: y\n\n") == [Event(b"x")]


def test_a_partial_mark_that_is_not_one_is_kept() -> None:
    assert events_of(b"\xefdata: x\n\ndata: y\n\n") == [Event(b"y")]
    parser = SSEParser()
    assert parser.feed(b"\xef\xbb") == []
    assert parser.in_event
    assert parser.feed(b"\xbfdata: z\n\n") == [Event(b"z")]


def test_an_event_cut_off_by_the_end_is_not_dispatched() -> None:
    parser = SSEParser()
    assert not parser.in_event
    assert parser.feed(b"data: whole\n\ndata: cut") == [Event(b"whole")]
    assert parser.in_event
    parser = SSEParser()
    parser.feed(b"data: cut\n")
    assert parser.in_event
    parser = SSEParser()
    parser.feed(b"id: 1\n")
    assert parser.in_event
    parser.feed(b"\n")
    assert not parser.in_event


def test_a_comment_between_events_leaves_no_event_open() -> None:
    parser = SSEParser()
    parser.feed(b": keep-alive\n")
    assert not parser.in_event
    parser.feed(b": partial")
    assert parser.in_event


def test_a_crlf_split_between_chunks() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\n\r") == [Event(b"a")]
    assert parser.feed(b"\ndata: b\r\n\r\n") == [Event(b"b")]


def test_events_complete_as_soon_as_their_blank_line_arrives() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n\ndata: b\r\r") == [Event(b"a"), Event(b"b")]
    assert parser.feed(b"") == []


# --- bounded memory -------------------------------------------------------------


def test_the_default_limit() -> None:
    assert SSEParser().max_event_size == DEFAULT_MAX_EVENT_SIZE == 16 * 1024 * 1024
    with pytest.raises(ValueError, match="max_event_size"):
        SSEParser(0)


def test_an_event_at_the_limit_passes() -> None:
    # The data plus the line being read, field name included.
    assert events_of(b"data: abcd\n\n", max_event_size=10) == [Event(b"abcd")]
    assert events_of(b"data: ab\ndata: c\n\n", max_event_size=10) == [Event(b"ab\nc")]


def test_the_error_is_a_message_too_large_error() -> None:
    error = EventTooLongError(10)
    assert isinstance(error, MessageTooLargeError)
    assert (error.limit, error.events, error.skipped) == (10, [], 1)
    assert "more than 10 bytes" in str(error)


@pytest.mark.parametrize(
    "big",
    [
        b"data: " + b"x" * 50 + b"\n",  # one long data line
        b"data: 0123\ndata: 4567\ndata: 89ab\n",  # many short ones
        b": " + b"c" * 50 + b"\n",  # a long comment
        b"data: ok\n" + b"event: " + b"e" * 50 + b"\n",
    ],
)
def test_an_over_long_event_is_skipped_and_the_rest_kept(big: bytes) -> None:
    stream = b"data: before\n\n" + big + b"data: skipped\n\n" + b"data: after\n\n"
    for chunks in splits(stream):
        events, errors = parse(chunks, SSEParser(max_event_size=16))
        assert events == [Event(b"before"), Event(b"after")], chunks
        assert errors == 1, chunks


def test_the_error_carries_the_events_of_its_chunk() -> None:
    parser = SSEParser(max_event_size=16)
    big = b"data: " + b"x" * 20 + b"\n\n"
    with pytest.raises(EventTooLongError) as caught:
        parser.feed(b"data: a\n\n" + big + b"data: b\n\n" + big + b"data: c\n")
    assert caught.value.events == [Event(b"a"), Event(b"b")]
    assert caught.value.skipped == 2
    assert "2 skipped" in str(caught.value)
    assert parser.feed(b"\n") == [Event(b"c")]


def test_an_event_over_the_limit_across_chunks_is_reported_once() -> None:
    parser = SSEParser(max_event_size=16)
    assert parser.feed(b"data: 0123456789\n") == []  # 16 bytes: at the limit
    with pytest.raises(EventTooLongError) as caught:
        parser.feed(b"data: x\n")
    assert caught.value.events == []
    assert parser.feed(b"data: \n") == []  # still skipping: no second error
    assert parser.feed(b"data: " + b"x" * 100) == []
    assert parser.feed(b"\n\ndata: next\n\n") == [Event(b"next")]


def test_an_over_long_line_is_dropped_as_it_arrives() -> None:
    parser = SSEParser(max_event_size=16)
    with pytest.raises(EventTooLongError):
        parser.feed(b"data: " + b"x" * 100)
    assert parser.in_event
    for _ in range(100):  # memory stays bounded however long it goes on
        assert parser.feed(b"x" * 1000) == []
        assert len(parser._buffer) == 0
    assert parser.feed(b"\r") == []
    assert parser.feed(b"\ndata: skipped\n\ndata: next\n\n") == [Event(b"next")]
    assert not parser.in_event


def test_a_skipped_event_still_sets_the_last_event_id() -> None:
    parser = SSEParser(max_event_size=16)
    with pytest.raises(EventTooLongError):
        parser.feed(b"id: 5\ndata: " + b"x" * 20 + b"\n\n")
    assert parser.last_event_id == "5"
    assert parser.feed(b"data: y\n\n") == [Event(b"y", id="5")]


def test_a_skipped_event_resets_its_type() -> None:
    parser = SSEParser(max_event_size=16)
    with pytest.raises(EventTooLongError):
        parser.feed(b"event: big\ndata: " + b"x" * 20 + b"\n\n")
    assert parser.feed(b"data: y\n\n") == [Event(b"y")]
