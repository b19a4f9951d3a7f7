"""Smoke test of the HTTP benchmark: it runs with tiny counts, reports every figure.

No timing is asserted: only the report's shape, the load client's HTTP parsing,
that it refuses a server answering something other than the echo, and that a
server printing no ready line (the scaffold's) is waited for by connecting.
Generates the scaffold into `.cache/benchmarks/scaffold/`, spawns the five
servers once (about 6 s, most of it the Python SDK's start-up); installs the
peers `.cache/peers/` on first use (cached afterwards).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest

from benchmarks import http

SIZES = http.TINY

WRONG_ECHO = """
import http.server, sys

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if b'"id"' not in body:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        request_id = body.split(b'"id":', 1)[1].split(b",", 1)[0]
        result = (
            b'{"protocolVersion":"2025-11-25"}' if b"initialize" in body
            else b'{"content":[{"type":"text","text":"not the message"}]}'
        )
        answer = b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (request_id, result)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Mcp-Session-Id", "s1")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
print("ready", sys.argv[1], flush=True)
server.serve_forever()
"""

LISTENS_SILENTLY = """
import socket, sys, time
server = socket.create_server(("127.0.0.1", int(sys.argv[1])))
time.sleep(60)
"""


def chunked(*chunks: bytes) -> bytes:
    """A chunked SSE response of these chunks, then the start of another one."""
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks)
    return head + body + b"0\r\n\r\nHTTP/1.1"


@pytest.fixture(scope="module")
def figures() -> dict[str, Any]:
    return http.run(sizes=SIZES, echo=lambda _line: None)


def test_responses_are_parsed_by_length_and_chunks() -> None:
    plain = b"HTTP/1.1 202 Accepted\r\nContent-Length: 2\r\n\r\nokHTTP"
    parsed = http.parse_response(plain)
    assert parsed is not None
    response, used = parsed
    assert (response.status, response.body, plain[used:]) == (202, b"ok", b"HTTP")
    assert http.parse_response(plain[:-5]) is None
    events = [b"event: message\r\ndata: {}\r\n\r\n", b"data: x\n", b"\n"]
    stream = chunked(*events)
    parsed = http.parse_response(stream)
    assert parsed is not None
    assert parsed[0].body == b"".join(events)
    assert stream[parsed[1] :] == b"HTTP/1.1"
    for cut in range(len(stream) - len(b"HTTP/1.1")):
        assert http.parse_response(stream[:cut]) is None
    with pytest.raises(ValueError, match="status line"):
        http.parse_response(b"HTTP/2 OK\r\n\r\n")


def test_the_response_event_of_a_stream_is_taken() -> None:
    body = (
        b'event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/x"}\r\n'
        b'\r\nevent: message\r\ndata: {"jsonrpc":"2.0","id":7,\r\ndata: '
        b'"result":{}}\r\n\r\n'
    )
    headers = {b"content-type": b"text/event-stream"}
    reply = http.reply_of(http.Response(200, headers, body))
    assert reply.id == 7 and reply.method is None
    with pytest.raises(ValueError, match="no event"):
        http.reply_of(http.Response(200, headers, b"event: ping\n\n"))


def test_every_contender_has_every_figure(figures: dict[str, Any]) -> None:
    assert tuple(figures["contenders"]) == http.CONTENDERS
    for entry in figures["contenders"].values():
        assert entry["argv"]
        for key in (*http.METRICS, *http.CLIENT_METRICS, *http.CALLS_MADE):
            stat = entry[key]
            assert len(stat["samples"]) == SIZES.rounds
            assert stat["min"] <= stat["median"] <= stat["max"]
            assert stat["min"] >= 0
        assert entry["sequential_req_per_s"]["median"] > 0
        assert entry["concurrent_req_per_s"]["median"] > 0
        assert entry["p50_us"]["median"] <= entry["p99_us"]["median"]
        assert entry["peak_rss_mib"]["median"] > 0
        assert entry["sequential_calls_made"]["min"] == SIZES.sequential
        assert entry["concurrent_calls_made"]["min"] == SIZES.concurrent


def test_ratios_and_targets(figures: dict[str, Any]) -> None:
    assert set(figures["ratios"]) == {f"ours/{c}" for c in http.CONTENDERS[1:]}
    for ratios in figures["ratios"].values():
        assert ratios["sequential_req_per_s"] > 0
        assert ratios["concurrent_req_per_s"] > 0
    assert len(figures["targets"]) == 2
    assert all(isinstance(check["met"], bool) for check in figures["targets"])
    assert figures["meets_targets"] == all(c["met"] for c in figures["targets"])


def test_report_shape(figures: dict[str, Any]) -> None:
    assert figures["protocol_version"] == "2025-11-25"
    assert figures["concurrency"] == http.CONCURRENCY
    assert figures["rounds"] == SIZES.rounds
    assert figures["sequential_calls"] == SIZES.sequential
    assert figures["concurrent_calls"] == SIZES.concurrent
    ours = figures["contenders"][http.OURS]["argv"]
    assert ours[-5:] == ["-m", "scaffold_echo", "--http", "--port", ours[-1]]
    assert figures["versions"]["mcp (Python SDK)"] == "2.3.0"
    assert figures["versions"]["@modelcontextprotocol/sdk"] == "1.32.2"
    assert json.loads(json.dumps(figures)) == figures
    text = http.report(figures)
    for name in http.CONTENDERS:
        assert name in text
    for label in http.METRICS.values():
        assert label in text
    assert "capped" not in text


def test_a_wrong_echo_is_refused() -> None:
    impostor = http.Contender(
        "impostor", [sys.executable, "-c", WRONG_ECHO, http.PORT], dict(os.environ)
    )
    with pytest.raises(http.ServerFailedError, match="wrong echo"):
        http.measure(impostor, SIZES)


def test_a_server_that_never_gets_ready_is_refused() -> None:
    mute = http.Contender("mute", [sys.executable, "-c", "print('hello')"], {})
    with pytest.raises(http.ServerFailedError, match="not the ready line"):
        http.measure(mute, SIZES)


def test_a_silent_server_is_up_once_it_listens() -> None:
    quiet = http.Contender(
        http.OURS, [sys.executable, "-c", LISTENS_SILENTLY, http.PORT], {}
    )
    server = http.Server(quiet)
    try:
        assert server.proc.poll() is None
    finally:
        server.close()


def test_a_silent_server_that_exits_is_refused() -> None:
    gone = http.Contender(http.OURS, [sys.executable, "-c", "pass"], {})
    with pytest.raises(http.ServerFailedError, match="exited before listening"):
        http.Server(gone)
