"""The client's era probe over HTTP: what a server's answer to a 2026 request,
then to `initialize`, says; what an HTTP error answering any POST of the
client says; and the endpoint event of the HTTP+SSE transport.

The error bodies of the 2026-07-28 specification's examples are read from the
shared schema folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_specgen_runtime.transports.http import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    Event,
    FallbackInitialize,
    FallbackLegacySse,
    LegacyOk,
    ModernOk,
    ModernOutcome,
    ProbeError,
    ReadStream,
    Refusal,
    RetryWithVersion,
    classify_initialize,
    classify_initialize_reply,
    classify_modern,
    classify_modern_reply,
    client_refusal,
    legacy_endpoint,
)
from mcp_specgen_types import v2026_07_28
from tests.conftest import SHARED_SCHEMAS

EXAMPLES = SHARED_SCHEMAS / "2026-07-28" / "examples"
JSON = "application/json"
SSE = "text/event-stream"
MODERN = ("2026-07-28", "draft")
LEGACY = ("2025-03-26", "2025-06-18", "2025-11-25")
RESULT = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}


def example(name: str) -> bytes:
    (path,) = sorted((EXAMPLES / name).glob("*.json"))
    return Path(path).read_bytes()


def error_body(code: int, data: Any = None, message: str = "m") -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": 1, "error": error}).encode()


def unsupported(*supported: Any) -> bytes:
    return error_body(-32022, {"supported": list(supported), "requested": "x"})


def modern(
    status: int,
    body: bytes = b"",
    content_type: str | None = JSON,
    requested: str = "draft",
    legacy: tuple[str, ...] = LEGACY,
) -> ModernOutcome:
    return classify_modern(
        status,
        content_type,
        body,
        requested=requested,
        modern_versions=MODERN,
        legacy_versions=legacy,
    )


# --- the 2026 request -----------------------------------------------------------


def test_a_result_is_a_modern_server() -> None:
    body = json.dumps(RESULT).encode()
    assert modern(200, body) == ModernOk(RESULT)
    assert modern(200, body, "application/json; charset=utf-8") == ModernOk(RESULT)


@pytest.mark.parametrize(
    "result", [{}, {"resultType": "complete"}, {"supportedVersions": "2026-07-28"}]
)
def test_a_result_that_is_no_discover_result_is_a_legacy_server(
    result: dict[str, Any],
) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()
    outcome = classify_modern(
        200,
        JSON,
        body,
        requested="2026-07-28",
        modern_versions=MODERN,
        result_type=v2026_07_28.DiscoverResult,
    )
    assert isinstance(outcome, FallbackInitialize)
    assert "DiscoverResult" in outcome.reason
    reply = json.loads(body)
    assert classify_modern_reply(
        reply,
        requested="2026-07-28",
        modern_versions=MODERN,
        result_type=v2026_07_28.DiscoverResult,
    ) == FallbackInitialize(outcome.reason)


def test_a_discover_result_is_a_modern_server() -> None:
    result = {
        "supportedVersions": ["2026-07-28"],
        "capabilities": {},
        "cacheScope": "private",
        "ttlMs": 0,
    }
    reply = {"jsonrpc": "2.0", "id": 1, "result": result}
    outcome = classify_modern(
        200,
        JSON,
        json.dumps(reply).encode(),
        requested="2026-07-28",
        modern_versions=MODERN,
        result_type=v2026_07_28.DiscoverResult,
    )
    assert outcome == ModernOk(reply)


def test_a_stream_has_to_be_read() -> None:
    assert modern(200, b"", SSE) == ReadStream()
    assert modern(200, b"", "Text/Event-Stream; charset=utf-8") == ReadStream()


@pytest.mark.parametrize(
    ("status", "body", "content_type"),
    [
        (202, b"", None),
        (200, b"<html>", "text/html"),
        (200, b"", None),
        (200, b"not json", JSON),
        (200, b"[]", JSON),
        (200, b'[{"jsonrpc": "2.0", "id": 1, "result": {}}]', JSON),
        (200, b'{"id": 1, "result": {}}', JSON),
        (200, b'{"jsonrpc": "1.0", "id": 1, "result": {}}', JSON),
        (200, b'{"jsonrpc": "2.0", "id": 1}', JSON),
        (200, b'{"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}', JSON),
        (200, b'{"jsonrpc": "2.0", "id": 1, "error": "oops"}', JSON),
        (200, b'{"jsonrpc": "2.0", "id": 1, "error": {"code": "1"}}', JSON),
        (200, b'{"jsonrpc": "2.0", "id": 1, "error": {"code": true}}', JSON),
    ],
)
def test_a_2xx_without_a_reply_tells_nothing(
    status: int, body: bytes, content_type: str | None
) -> None:
    outcome = modern(status, body, content_type)
    assert isinstance(outcome, ProbeError)
    assert outcome.status == status


@pytest.mark.parametrize("code", [-32601, -32600, -32602, -32603, -32000, 1])
def test_another_error_in_a_2xx_is_a_legacy_server(code: int) -> None:
    outcome = modern(200, error_body(code))
    assert isinstance(outcome, FallbackInitialize)
    assert str(code) in outcome.reason


def test_the_spec_example_unsupported_version_retries_a_common_version() -> None:
    outcome = modern(400, example("UnsupportedProtocolVersionError"))
    assert outcome == RetryWithVersion("2026-07-28", ("2026-07-28", "2025-11-25"))


def test_the_newest_common_version_is_chosen() -> None:
    outcome = modern(400, unsupported("draft", "2026-07-28"), requested="2099-01-01")
    assert outcome == RetryWithVersion("draft", ("draft", "2026-07-28"))


def test_an_unsupported_version_in_a_2xx_is_read_the_same() -> None:
    outcome = modern(200, unsupported("2026-07-28"))
    assert outcome == RetryWithVersion("2026-07-28", ("2026-07-28",))


def test_a_server_refusing_a_version_it_lists_is_an_error() -> None:
    body = unsupported("2026-07-28", "draft")
    outcome = modern(400, body, requested="draft")
    assert isinstance(outcome, ProbeError)
    assert "lists as supported" in outcome.message
    assert outcome.reply == json.loads(body)


def test_only_legacy_common_versions_fall_back_to_initialize() -> None:
    outcome = modern(400, unsupported("2025-06-18", "2025-11-25"))
    assert isinstance(outcome, FallbackInitialize)
    assert "legacy" in outcome.reason


def test_no_common_version_is_an_error() -> None:
    outcome = modern(400, unsupported("2030-01-01", "2025-06-18"), legacy=())
    assert isinstance(outcome, ProbeError)
    assert "no common protocol version" in outcome.message
    assert outcome.reply is not None


@pytest.mark.parametrize(
    "body",
    [
        error_body(-32022),
        error_body(-32022, {"requested": "x"}),
        error_body(-32022, {"supported": "2026-07-28"}),
        error_body(-32022, ["2026-07-28"]),
    ],
)
def test_an_unsupported_version_without_a_list_falls_back(body: bytes) -> None:
    assert isinstance(modern(400, body), FallbackInitialize)


def test_non_string_versions_in_the_list_are_ignored() -> None:
    outcome = modern(400, unsupported(1, None, "2026-07-28"))
    assert outcome == RetryWithVersion("2026-07-28", ("2026-07-28",))


@pytest.mark.parametrize(
    "name", ["HeaderMismatchError", "MissingRequiredClientCapabilityError"]
)
def test_the_spec_example_request_errors_are_a_modern_server(name: str) -> None:
    body = example(name)
    assert modern(400, body) == ModernOk(json.loads(body))
    assert modern(200, body) == ModernOk(json.loads(body))
    assert classify_modern_reply(
        json.loads(body), requested="draft", modern_versions=MODERN
    ) == ModernOk(json.loads(body))


def test_the_missing_capability_code() -> None:
    assert MISSING_REQUIRED_CLIENT_CAPABILITY == -32021


def test_method_not_found_with_404_is_a_modern_server() -> None:
    error = json.loads(example("MethodNotFoundError"))
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "error": error}).encode()
    assert modern(404, body) == ModernOk(json.loads(body))
    assert isinstance(modern(400, body), FallbackInitialize)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"", None),
        (b"Bad Request: Missing session ID", "text/plain"),
        (
            error_body(
                -32000, message="Bad Request: Mcp-Session-Id header is required"
            ),
            JSON,
        ),
        (error_body(-32600), JSON),
        (b"{broken", JSON),
    ],
)
def test_a_400_without_a_modern_error_falls_back_to_initialize(
    body: bytes, content_type: str | None
) -> None:
    assert isinstance(modern(400, body, content_type), FallbackInitialize)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, b""),
        (404, b"Not Found"),
        (404, error_body(-32000)),
        (405, b""),
        (405, b"Method Not Allowed"),
        (405, error_body(-32000)),
        (405, error_body(-32601)),
    ],
)
def test_404_and_405_without_a_modern_error_try_http_sse(
    status: int, body: bytes
) -> None:
    content_type = JSON if body.startswith(b"{") else "text/plain"
    outcome = modern(status, body, content_type)
    assert isinstance(outcome, FallbackLegacySse)
    assert str(status) in outcome.reason


@pytest.mark.parametrize("status", [301, 401, 403, 406, 413, 415, 421, 500, 503])
def test_other_statuses_are_errors(status: int) -> None:
    outcome = modern(status, b"")
    assert outcome == ProbeError(f"HTTP {status}", status, None)


def test_a_5xx_with_a_modern_error_is_still_an_error() -> None:
    body = unsupported("2026-07-28")
    outcome = modern(500, body)
    assert outcome == ProbeError("HTTP 500", 500, json.loads(body))


def test_a_reply_read_from_a_stream() -> None:
    assert classify_modern_reply(
        RESULT, requested="draft", modern_versions=MODERN
    ) == ModernOk(RESULT)
    assert isinstance(
        classify_modern_reply(
            json.loads(error_body(-32601)), requested="draft", modern_versions=MODERN
        ),
        FallbackInitialize,
    )
    outcome = classify_modern_reply(
        json.loads(unsupported("2025-11-25")),
        requested="draft",
        modern_versions=MODERN,
        legacy_versions=LEGACY,
    )
    assert isinstance(outcome, FallbackInitialize)


# --- initialize -----------------------------------------------------------------


def initialize(
    status: int, body: bytes = b"", content_type: str | None = JSON
) -> object:
    return classify_initialize(status, content_type, body, modern_versions=MODERN)


def test_an_initialize_result_is_a_legacy_server() -> None:
    reply = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}
    assert initialize(200, json.dumps(reply).encode()) == LegacyOk(reply)


def test_an_initialize_error_is_the_sessions_to_judge() -> None:
    body = error_body(-32602)
    assert initialize(200, body) == LegacyOk(json.loads(body))
    no_common = unsupported("2030-01-01")
    assert initialize(200, no_common) == LegacyOk(json.loads(no_common))


def test_an_initialize_stream_has_to_be_read() -> None:
    assert initialize(200, b"", SSE) == ReadStream()


@pytest.mark.parametrize("status", [200, 400])
def test_a_modern_only_server_refusing_initialize_names_a_version(
    status: int,
) -> None:
    outcome = initialize(status, example("UnsupportedProtocolVersionError"))
    assert outcome == RetryWithVersion("2026-07-28", ("2026-07-28", "2025-11-25"))


def test_a_modern_only_server_without_a_common_version_is_an_error() -> None:
    body = unsupported("2030-01-01")
    outcome = initialize(400, body)
    assert isinstance(outcome, ProbeError)
    assert (outcome.status, outcome.reply) == (400, json.loads(body))


@pytest.mark.parametrize("status", [400, 404, 405])
def test_initialize_refused_tries_http_sse(status: int) -> None:
    assert initialize(status, b"", None) == FallbackLegacySse(f"{status} to initialize")
    assert isinstance(initialize(status, error_body(-32600)), FallbackLegacySse)


@pytest.mark.parametrize("status", [202, 401, 403, 406, 500])
def test_initialize_other_statuses_are_errors(status: int) -> None:
    outcome = initialize(status, b"", None)
    assert isinstance(outcome, ProbeError)
    assert outcome.status == status


def test_an_initialize_reply_read_from_a_stream() -> None:
    assert classify_initialize_reply(RESULT) == LegacyOk(RESULT)
    reply = json.loads(unsupported("2026-07-28"))
    assert classify_initialize_reply(reply) == LegacyOk(reply)
    assert classify_initialize_reply(reply, modern_versions=MODERN) == (
        RetryWithVersion("2026-07-28", ("2026-07-28",))
    )


# --- an HTTP error answering any POST of the client -----------------------------


@pytest.mark.parametrize(
    ("status", "content_type", "body", "method", "version", "expected"),
    [
        (404, None, b"", "initialize", None, Refusal("404 to initialize")),
        (405, None, b"", "initialize", None, Refusal("405 to initialize")),
        (
            400,
            JSON,
            error_body(-32000),
            "initialize",
            None,
            Refusal("400 to initialize"),
        ),
        # -32022 naming no modern version: still no fallback to HTTP+SSE.
        (400, JSON, unsupported("2025-11-25"), "initialize", None, Refusal()),
        (500, None, b"", "initialize", None, Refusal()),
        (403, None, b"", "initialize", None, Refusal()),
        (
            404,
            None,
            b"",
            "server/discover",
            "2026-07-28",
            Refusal(era="404 without a modern JSON-RPC error"),
        ),
        (
            400,
            "text/plain",
            b"no",
            "tools/list",
            "2026-07-28",
            Refusal(era="400 without a modern JSON-RPC error"),
        ),
        (500, None, b"", "tools/list", "2026-07-28", Refusal()),
        (404, JSON, error_body(-32601), "tools/list", "2026-07-28", Refusal()),
        (404, None, b"", "tools/list", None, Refusal()),
        (404, None, b"", None, None, Refusal()),
    ],
)
def test_a_client_refusal_tells_the_era_when_it_can(
    status: int,
    content_type: str | None,
    body: bytes,
    method: str | None,
    version: str | None,
    expected: Refusal,
) -> None:
    refusal = client_refusal(status, content_type, body, method=method, version=version)
    assert refusal == expected


# --- the HTTP+SSE endpoint event ------------------------------------------------

SSE_URL = "http://localhost:8000/sse"


@pytest.mark.parametrize(
    ("data", "url"),
    [
        (b"/messages?sessionId=abc", "http://localhost:8000/messages?sessionId=abc"),
        (b"messages", "http://localhost:8000/messages"),
        (b" /messages \n", "http://localhost:8000/messages"),
        (b"http://localhost:8000/m", "http://localhost:8000/m"),
    ],
)
def test_the_endpoint_event_names_the_post_url(data: bytes, url: str) -> None:
    assert legacy_endpoint(Event(data, "endpoint"), SSE_URL) == url


def test_other_events_are_not_the_endpoint() -> None:
    assert legacy_endpoint(Event(b"/messages"), SSE_URL) is None
    assert legacy_endpoint(Event(b"/messages", "Endpoint"), SSE_URL) is None


@pytest.mark.parametrize(
    "data",
    [
        b"http://evil.com/messages",
        b"https://localhost:8000/messages",
        b"http://localhost:8001/messages",
        b"//evil.com/messages",
    ],
)
def test_an_endpoint_on_another_origin_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError, match="not on the origin"):
        legacy_endpoint(Event(data, "endpoint"), SSE_URL)


def test_an_endpoint_that_is_not_text_is_refused() -> None:
    with pytest.raises(ValueError, match="not UTF-8"):
        legacy_endpoint(Event(b"\xff", "endpoint"), SSE_URL)
