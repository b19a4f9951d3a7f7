"""The HTTP request each JSON-RPC request came in (`RequestContext.http_request`,
read by `ctx.http`): taken from the ASGI scope, kept through a cluster's
forwarding, and matched to its message by every transport."""

from __future__ import annotations

import pytest

from mcp_specgen_runtime.transports.http.auth import HttpRequest, request_of
from mcp_specgen_runtime.transports.http.headers import HttpHeaders
from mcp_specgen_runtime.transports.http.legacy_sse import (
    _SessionTransport,  # pyright: ignore[reportPrivateUsage]
)
from mcp_specgen_runtime.transports.http.mux import ResponseStream, SessionMux
from mcp_specgen_runtime.transports.http.relay import (
    forwarded_request,
    received_request,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def request(path: str = "/mcp") -> HttpRequest:
    headers = HttpHeaders([("X-Tenant", "acme")])
    return HttpRequest("POST", path, headers, ("10.0.0.7", 5123), b"a=1", "https")


def test_the_scheme_comes_from_the_scope() -> None:
    scope = {"method": "POST", "path": "/mcp", "scheme": "https", "headers": []}
    assert request_of(scope, HttpHeaders()).scheme == "https"
    del scope["scheme"]
    assert request_of(scope, HttpHeaders()).scheme == "http"


def test_a_forwarded_request_arrives_as_it_was_received() -> None:
    original = request()
    forwarded = forwarded_request(original)
    assert forwarded is not None
    received = received_request(forwarded)
    assert list(received.headers) == list(original.headers)
    assert (received.method, received.path, received.client) == (
        original.method,
        original.path,
        original.client,
    )
    assert (received.query, received.scheme) == (b"a=1", "https")


@pytest.mark.anyio
async def test_a_session_names_the_post_of_each_request() -> None:
    mux = SessionMux()
    first, second = ResponseStream(frozenset({1})), ResponseStream(frozenset({2}))
    first.http_request, second.http_request = request("/one"), request("/two")
    try:
        mux.feed(b'{"jsonrpc":"2.0","id":1,"method":"ping"}', first)
        mux.feed(b'{"jsonrpc":"2.0","id":2,"method":"ping"}', second)
        assert mux.http_request_of(1) is first.http_request
        assert mux.http_request_of(2) is second.http_request
        assert mux.http_request_of(3) is None
    finally:
        await mux.aclose()
        first.end()
        second.end()


@pytest.mark.anyio
async def test_an_http_sse_session_names_the_post_of_each_message() -> None:
    """The engine reads a body's requests before it receives the next one:
    the POST of the body received last is theirs."""
    transport = _SessionTransport(4)
    first, second = request("/messages?1"), request("/messages?2")
    try:
        await transport.feed(b"{}", first)
        await transport.feed(b"[]", second)
        assert await transport.receive() == b"{}"
        assert transport.http_request_of(1) is first
        assert await transport.receive() == b"[]"
        assert transport.http_request_of(1) is second
    finally:
        transport.discard()
