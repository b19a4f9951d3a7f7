"""A round-robin HTTP reverse proxy on loopback, for the multi-instance tests
and benchmark.

    python -m benchmarks.proxy --port 9000 http://127.0.0.1:8001 http://127.0.0.1:8002

`RoundRobinProxy` is an ASGI app (run by uvicorn) forwarding every request to
the next upstream in turn through httpx, streaming both ways: the request
body goes up as it arrives, the answer comes back chunk by chunk, so an SSE
answer reaches the client event by event. Decisions:

- Not one `httpx.AsyncClient` but `LANES` per upstream, a client connection
  always using the same lane: httpcore checks every pooled connection of a
  client on each request (a `poll` and more per connection), so one pool of
  16 busy connections cost the proxy about 2 ms of CPU per request here;
  small pools bring that under 1 ms.
- An upstream that refuses the connection (an instance that died) is skipped
  and the same request goes to the next one; it is left out of the rotation
  for `down_s` seconds, then tried again. A connection the upstream closed
  before any response byte (a graceful stop closing an idle kept-alive
  connection as a request was written on it, which it never served) moves the
  request once more, as nginx's `proxy_next_upstream error` would (a SIGKILL
  at that instant could make that a second run). Any other failure after
  sending is never sent twice: it may have run.
  That one, or every upstream refusing, is answered 502 with a JSON-RPC
  error (-32603, "... send it again", id null), which an MCP client hands
  to the request, as the cluster answers a request whose instance died.
- Every end-to-end header passes both ways (`Mcp-Session-Id`,
  `MCP-Protocol-Version`, `Last-Event-ID`, `Mcp-Method`, `Mcp-Name`, `Accept`,
  `Content-Type`, `Authorization`, ...); the hop-by-hop ones (RFC 9110 7.6.1)
  do not, and `Host` is the upstream's (the instances check it against their
  loopback allow-list), the client's going in `X-Forwarded-Host`.
- An upstream dying mid-answer ends the client's answer: a streamed (chunked)
  one ends there, as if the server had closed it, so a client resumes it
  (GET with `Last-Event-ID`); one of a declared length is cut by closing the
  connection, which the client sees as a broken response.
- Idle upstream connections are dropped after `KEEPALIVE_S`, before the
  instances' own keep-alive timeout closes them under a request.
- No timeout on reading an answer (SSE streams stay open for ever); connecting
  has `connect_timeout`.

`counts` records how many requests each upstream took, `failovers` how many
were moved because an upstream refused them, `resumes` how many GETs carried
`Last-Event-ID`.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, Any

import anyio
import httpx

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

Scope = dict[str, Any]
Message = dict[str, Any]

HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"host",
    }
)
"""Headers that belong to one connection, never forwarded (and `Host`, which
is the upstream's)."""


LANES = 16
"""httpx clients per upstream (see the module docstring)."""

KEEPALIVE_S = 2.0
"""How long an idle upstream connection is kept: shorter than uvicorn's 5 s,
so the proxy never reuses one the instance is closing at that moment (which
fails a request already sent: a 502)."""


class _Body:
    """The client's request body, read from ASGI `receive` as the upstream
    takes it, and kept so a request refused at connect can be sent again."""

    def __init__(self, receive: Any) -> None:
        self._receive = receive
        self._chunks: list[bytes] = []
        self._done = False

    async def stream(self) -> AsyncIterator[bytes]:
        for chunk in list(self._chunks):
            yield chunk
        while not self._done:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                raise _ClientGoneError
            chunk = message.get("body", b"")
            self._done = not message.get("more_body", False)
            if chunk:
                self._chunks.append(chunk)
                yield chunk

    async def wait_disconnect(self) -> None:
        """Return when the client hangs up (after its body was read)."""
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                return


async def _cancel_on_disconnect(body: _Body, scope: anyio.CancelScope) -> None:
    # Without this, a standalone SSE stream whose client left would be read
    # from its upstream for ever.
    await body.wait_disconnect()
    scope.cancel()


class _ClientGoneError(Exception):
    """The client hung up while sending its body."""


class _UpstreamBrokeError(Exception):
    """An upstream died in the middle of an answer of declared length: the
    client's connection is closed (uvicorn does so on an app error)."""


class RoundRobinProxy:
    """The proxy as an ASGI app (see the module docstring).

    Args:
        upstreams: base URLs (`http://127.0.0.1:8001`); a request's path and
            query are appended.
        connect_timeout: seconds to wait for an upstream to accept.
        down_s: seconds an upstream that refused is left out of the rotation.
    """

    def __init__(
        self,
        upstreams: Sequence[str],
        *,
        connect_timeout: float = 2.0,
        down_s: float = 1.0,
    ) -> None:
        if not upstreams:
            raise ValueError("give at least one upstream URL")
        self.upstreams = [url.rstrip("/") for url in upstreams]
        self.down_s = down_s
        self._timeout = httpx.Timeout(None, connect=connect_timeout)
        self._clients: dict[tuple[int, int], httpx.AsyncClient] = {}
        self._next = 0
        self._down_until = [0.0] * len(self.upstreams)
        self.counts = [0] * len(self.upstreams)
        self.failovers = 0
        self.resumes = 0
        """GET requests carrying `Last-Event-ID` (clients resuming a stream)."""
        self.planned: list[int] = []
        """Upstreams for the next requests, in order, before `pinned` and
        the rotation (tests route each step of a flow; no failover)."""
        self.pinned: int | None = None
        """When set, every request goes to this upstream (tests route a
        step to a chosen instance); no failover then."""

    def client(self, index: int, lane: int = 0) -> httpx.AsyncClient:
        """The client of upstream `index` for `lane` (made on first use)."""
        found = self._clients.get((index, lane))
        if found is None:
            limits = httpx.Limits(
                max_connections=None,
                max_keepalive_connections=64,
                keepalive_expiry=KEEPALIVE_S,
            )
            found = self._clients[index, lane] = httpx.AsyncClient(
                timeout=self._timeout, limits=limits, verify=False  # plain HTTP
            )
        return found

    async def aclose(self) -> None:
        """Close the upstream connections."""
        clients, self._clients = self._clients, {}
        for client in clients.values():
            await client.aclose()

    def order(self) -> list[int]:
        """The upstreams to try for the next request: the next in turn first,
        those recently refused last (only the planned or pinned one when set)."""
        if self.planned:
            return [self.planned.pop(0)]
        if self.pinned is not None:
            return [self.pinned]
        start = self._next
        self._next = (self._next + 1) % len(self.upstreams)
        turn = [(start + k) % len(self.upstreams) for k in range(len(self.upstreams))]
        now = time.monotonic()
        return sorted(turn, key=lambda i: self._down_until[i] > now)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Any, send: Any) -> None:
        body = _Body(receive)
        lane = hash(scope.get("client")) % LANES
        headers = _request_headers(scope)
        target = scope.get("raw_path") or scope["path"].encode()
        if scope.get("query_string") and b"?" not in target:
            target += b"?" + scope["query_string"]
        path = target.decode("latin-1")
        if scope["method"] == "GET" and any(
            name.lower() == b"last-event-id" for name, _ in scope["headers"]
        ):
            self.resumes += 1
        has_body = any(
            name.lower() in (b"content-length", b"transfer-encoding")
            for name, _ in scope["headers"]
        )
        response: httpx.Response | None = None
        resent = False
        for index in self.order():
            request = self.client(index, lane).build_request(
                scope["method"],
                self.upstreams[index] + path,
                headers=headers,
                content=body.stream() if has_body else None,
            )
            # Counted before it is sent: whatever it causes upstream (an
            # answer relayed elsewhere) comes after the count.
            self.counts[index] += 1
            try:
                response = await self.client(index, lane).send(request, stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout):
                self.counts[index] -= 1
                self._down_until[index] = time.monotonic() + self.down_s
                self.failovers += 1
                continue
            except _ClientGoneError:
                return
            except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                # Closed before any response byte: what a graceful stop does
                # to an idle kept-alive connection a request was being written
                # on (never served). Sent once more, to the next upstream.
                if resent:
                    await _bad_gateway(send, f"it failed before answering ({exc!r})")
                    return
                resent = True
                self.counts[index] -= 1
                self.failovers += 1
                continue
            except httpx.HTTPError as exc:  # sent, then broken: never resent
                await _bad_gateway(send, f"it failed before answering ({exc!r})")
                return
            self._down_until[index] = 0.0
            break
        if response is None:
            await _bad_gateway(send, "no server instance accepted the connection")
            return
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_cancel_on_disconnect, body, tasks.cancel_scope)
                await self._relay(response, send)
                tasks.cancel_scope.cancel()
        finally:
            await response.aclose()

    @staticmethod
    async def _relay(response: httpx.Response, send: Any) -> None:
        out = [
            (name.lower(), value)
            for name, value in response.headers.raw
            if name.lower() not in HOP_BY_HOP
        ]
        sized = any(name == b"content-length" for name, _ in out)
        await send(
            {
                "type": "http.response.start",
                "status": response.status_code,
                "headers": out,
            }
        )
        try:
            async for chunk in response.aiter_raw():
                await send(
                    {"type": "http.response.body", "body": chunk, "more_body": True}
                )
        except httpx.HTTPError as exc:
            if sized:
                raise _UpstreamBrokeError(repr(exc)) from None
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _request_headers(scope: Scope) -> list[tuple[bytes, bytes]]:
    headers: list[tuple[bytes, bytes]] = []
    for name, value in scope["headers"]:
        lower = name.lower()
        if lower == b"host":
            headers.append((b"x-forwarded-host", value))
        elif lower not in HOP_BY_HOP:
            headers.append((name, value))
    client = scope.get("client")
    if client:
        headers.append((b"x-forwarded-for", str(client[0]).encode()))
    return headers


async def _bad_gateway(send: Any, why: str) -> None:
    """502 with a JSON-RPC error body, which MCP clients hand to the request
    (the proxy reads no body, so the id is null)."""
    error = {
        "code": -32603,
        "message": f"the server instance serving this request: {why}; send it again",
    }
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 502,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m benchmarks.proxy --port P URL...`: serve until interrupted."""
    import uvicorn

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.proxy",
        description="Round-robin HTTP reverse proxy on loopback.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log-level", default="warning")
    parser.add_argument("upstreams", nargs="+", metavar="URL")
    args = parser.parse_args(argv)
    uvicorn.run(
        RoundRobinProxy(args.upstreams),
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        lifespan="on",
        timeout_graceful_shutdown=2,
    )


if __name__ == "__main__":
    main()
