"""The round-robin proxy (`benchmarks.proxy`) in front of small ASGI upstreams,
all served by uvicorn on loopback."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import uvicorn

from benchmarks.proxy import RoundRobinProxy


def _port() -> tuple[socket.socket, int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    return sock, port


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Run `app` with uvicorn in a thread; its base URL."""
    sock, port = _port()
    config = uvicorn.Config(
        app, log_level="critical", lifespan="on", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "no server"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


class Upstream:
    """An upstream that answers what it saw: its name, the method, path,
    headers and body; `/sse` streams three events, `/die` one then fails."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.release = threading.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                done = message["type"] + ".complete"
                await send({"type": done})
                if message["type"] == "lifespan.shutdown":
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"] in ("/sse", "/die"):
            await self._stream(scope["path"], send)
            return
        seen = {
            "upstream": self.name,
            "method": scope["method"],
            "path": scope["path"],
            "query": scope["query_string"].decode(),
            "headers": {k.decode(): v.decode() for k, v in scope["headers"]},
            "body": body.decode(),
        }
        payload = json.dumps(seen).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"mcp-session-id", b"s-1"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    async def _stream(self, path: str, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        for n in range(3):
            event = f'id: {n}\ndata: {{"n": {n}}}\n\n'.encode()
            await send({"type": "http.response.body", "body": event, "more_body": True})
            if path == "/die":
                raise RuntimeError("the upstream died mid-stream")
        await send({"type": "http.response.body", "body": b"", "more_body": False})


@pytest.fixture
def two() -> Iterator[tuple[str, RoundRobinProxy]]:
    with serving(Upstream("a")) as a, serving(Upstream("b")) as b:
        proxy = RoundRobinProxy([a, b])
        with serving(proxy) as url:
            yield url, proxy


def test_requests_alternate_between_upstreams(
    two: tuple[str, RoundRobinProxy],
) -> None:
    url, proxy = two
    with httpx.Client() as client:
        seen = [client.post(f"{url}/mcp", content=b"{}").json() for _ in range(4)]
    assert [s["upstream"] for s in seen] == ["a", "b", "a", "b"]
    assert proxy.counts == [2, 2]


def test_headers_body_path_and_query_pass_both_ways(
    two: tuple[str, RoundRobinProxy],
) -> None:
    url, proxy = two
    sent = {
        "Mcp-Session-Id": "s-1",
        "MCP-Protocol-Version": "2025-11-25",
        "Last-Event-ID": "ev-7",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "echo",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": "Bearer t0ken",
    }
    with httpx.Client() as client:
        answer = client.post(f"{url}/mcp?x=1", content=b'{"a": 1}', headers=sent)
    seen = answer.json()
    assert answer.headers["mcp-session-id"] == "s-1"
    assert (seen["method"], seen["path"], seen["query"]) == ("POST", "/mcp", "x=1")
    assert seen["body"] == '{"a": 1}'
    for name, value in sent.items():
        assert seen["headers"][name.lower()] == value
    assert proxy.resumes == 0  # a POST, though it carries Last-Event-ID
    # Host is the upstream's (its allow-list), the client's is forwarded.
    assert seen["headers"]["host"] != seen["headers"]["x-forwarded-host"]
    assert seen["headers"]["x-forwarded-host"] == url.removeprefix("http://")


def test_a_get_carries_no_body(two: tuple[str, RoundRobinProxy]) -> None:
    url, proxy = two
    with httpx.Client() as client:
        seen = client.get(f"{url}/mcp").json()
        client.get(f"{url}/mcp", headers={"Last-Event-ID": "e-1"})
    assert proxy.resumes == 1
    assert seen["method"] == "GET"
    assert "transfer-encoding" not in seen["headers"]
    assert "content-length" not in seen["headers"]


def test_sse_events_arrive_as_they_come(two: tuple[str, RoundRobinProxy]) -> None:
    url, _ = two
    with httpx.Client() as client, client.stream("GET", f"{url}/sse") as answer:
        text = "".join(answer.iter_text())
    assert answer.headers["content-type"] == "text/event-stream"
    assert text.count("data:") == 3


def test_an_upstream_dying_mid_stream_ends_the_clients_stream(
    two: tuple[str, RoundRobinProxy],
) -> None:
    url, _ = two
    with httpx.Client() as client, client.stream("GET", f"{url}/die") as answer:
        text = "".join(answer.iter_text())  # ends cleanly: the client resumes
    assert text == 'id: 0\ndata: {"n": 0}\n\n'


def test_a_refusing_upstream_is_skipped() -> None:
    dead, port = _port()
    dead.close()  # nothing listens there
    with serving(Upstream("a")) as a:
        proxy = RoundRobinProxy([f"http://127.0.0.1:{port}", a], down_s=60)
        with serving(proxy) as url, httpx.Client() as client:
            seen = [client.post(f"{url}/mcp", content=b"x").json() for _ in range(3)]
    assert [s["upstream"] for s in seen] == ["a", "a", "a"]
    assert all(s["body"] == "x" for s in seen)  # the body went again, whole
    assert proxy.failovers == 1  # then left out of the rotation
    assert proxy.counts == [0, 3]


def test_no_upstream_accepting_is_502() -> None:
    dead, port = _port()
    dead.close()
    proxy = RoundRobinProxy([f"http://127.0.0.1:{port}"])
    with serving(proxy) as url, httpx.Client() as client:
        answer = client.post(f"{url}/mcp", content=b"{}")
    assert answer.status_code == 502
    error = answer.json()["error"]
    assert error["code"] == -32603
    assert "no server instance accepted" in error["message"]
    assert error["message"].endswith("send it again")


def test_an_upstream_hanging_up_before_answering_is_502_send_it_again() -> None:
    listener, port = _port()
    listener.listen()
    hits: list[bytes] = []

    def hang_up() -> None:
        conn, _ = listener.accept()
        hits.append(conn.recv(65536))
        conn.close()  # no answer at all: a crash mid-request

    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    proxy = RoundRobinProxy([f"http://127.0.0.1:{port}"])
    with serving(proxy) as url, httpx.Client() as client:
        answer = client.post(f"{url}/mcp", content=b'{"id": 1}')
    thread.join(5)
    listener.close()
    assert len(hits) == 1  # sent once, never again
    assert answer.status_code == 502
    assert answer.json()["error"]["message"].endswith("send it again")


def test_needs_an_upstream() -> None:
    with pytest.raises(ValueError, match="at least one"):
        RoundRobinProxy([])


def test_a_pinned_proxy_sends_everything_to_one_upstream(
    two: tuple[str, RoundRobinProxy],
) -> None:
    url, proxy = two
    proxy.pinned = 1
    with httpx.Client() as client:
        seen = [client.post(f"{url}/mcp", content=b"{}").json() for _ in range(3)]
    proxy.pinned = None
    with httpx.Client() as client:
        seen += [client.post(f"{url}/mcp", content=b"{}").json() for _ in range(2)]
    assert [s["upstream"] for s in seen] == ["b", "b", "b", "a", "b"]


def test_planned_upstreams_come_first_then_the_rotation(
    two: tuple[str, RoundRobinProxy],
) -> None:
    url, proxy = two
    proxy.planned = [1, 1, 0]
    with httpx.Client() as client:
        seen = [client.post(f"{url}/mcp", content=b"{}").json() for _ in range(5)]
    assert [s["upstream"] for s in seen] == ["b", "b", "a", "a", "b"]
