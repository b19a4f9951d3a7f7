"""The scaling benchmark's helpers: requests, response checks, the cells'
regrouping, and a stdio client that neither deadlocks on big messages nor
accepts a wrong tool list.

No timing is asserted; the benchmark itself runs in the smoke test
(`test_benchmarks_smoke.py`, `all --quick`). The few servers spawned here are
short Python scripts (well under a second each).
"""

from __future__ import annotations

import os
import sys

import msgspec
import pytest

from benchmarks import scaling
from benchmarks._common import Contender, ServerFailedError, compare
from benchmarks.programs import app_tools_server
from mcp_specgen_runtime.codec.wire import convert, encode
from mcp_specgen_types import v2025_11_25

FLOODING_ECHO = """
import json, sys

def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()

init = json.loads(sys.stdin.readline())
send({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": "2025-11-25"}})
sys.stdin.readline()  # notifications/initialized
# 1 MB of notification before reading the next request: a client that writes
# its whole 1 MB request before reading would wait on a full pipe forever.
send({"jsonrpc": "2.0", "method": "notifications/message", "params": "x" * 10**6})
for line in sys.stdin:
    request = json.loads(line)
    text = request["params"]["arguments"]["message"]
    result = {"content": [{"type": "text", "text": text}]}
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})
"""

SHORT_LIST = """
import json, sys

for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    if request["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25"}
    else:
        schema = {"type": "object"}
        result = {"tools": [{"name": "tool_0000", "inputSchema": schema}]}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}))
    sys.stdout.flush()
"""


def listing(n: int) -> bytes:
    """Our App's tools/list result for `n` tools, as it goes on the wire."""
    page = app_tools_server.make_app(n).list_tools(None)
    return encode(convert(page, v2025_11_25.ListToolsResult))


def tool(name: str, **schema: object) -> dict[str, object]:
    properties = {"message": {"type": "string"}, "count": {"type": "integer"}}
    input_schema = {
        "type": "object",
        "properties": properties,
        "required": ["message"],
        **schema,
    }
    return {"name": name, "inputSchema": input_schema}


def test_messages_have_their_size_and_need_no_escapes() -> None:
    for size in (*scaling.MESSAGE_SIZES, 1, 33):
        message = scaling.message_of(size)
        assert len(message) == size
        assert message.isascii()
        assert msgspec.json.encode(message) == b'"%s"' % message.encode()


def test_requests_are_one_line_of_json_rpc() -> None:
    message = scaling.message_of(100)
    request = scaling.echo_request(7, msgspec.json.encode(message))
    assert request.endswith(b"\n") and request.count(b"\n") == 1
    assert msgspec.json.decode(request) == {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": message}},
    }
    assert msgspec.json.decode(scaling.list_request(3)) == {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/list",
    }


@pytest.mark.parametrize("n", [1, 10, 1000])
def test_our_tools_server_lists_n_tools_in_one_page(n: int) -> None:
    result = listing(n)
    assert scaling.tools_problem(result, n) is None
    tools = msgspec.json.decode(result)["tools"]
    assert [t["name"] for t in tools] == [scaling.tool_name(i) for i in range(n)]
    assert app_tools_server.tool_name(n - 1) == scaling.tool_name(n - 1)
    assert scaling.tools_problem(result, n + 1) is not None


def test_a_wrong_tool_list_is_named() -> None:
    def problem(result: object, n: int = 2) -> str | None:
        return scaling.tools_problem(msgspec.json.encode(result), n)

    good = [tool("tool_0000"), tool("tool_0001")]
    assert problem({"tools": good}) is None
    assert problem({"tools": good[::-1]}) is None  # the order is not checked
    paged = problem({"tools": good, "nextCursor": "abc"})
    assert paged == "paginated: a nextCursor"
    short = problem({"tools": good[:1]})
    assert short == "1 tools, not tool_0000..tool_0001"
    renamed = problem({"tools": [good[0], tool("other")]})
    assert renamed is not None and renamed.startswith("2 tools, not")
    required = problem({"tools": [good[0], tool("tool_0001", required=[])]})
    assert required == "tool_0001: required []"
    typed = {"message": {"type": "integer"}, "count": {"type": "integer"}}
    wrong = problem({"tools": [good[0], tool("tool_0001", properties=typed)]})
    assert wrong is not None and wrong.startswith("tool_0001: input schema")
    assert problem({"tools": "none"}) is not None
    assert problem([]) is not None


def test_a_wrong_echo_is_named() -> None:
    def result(*texts: str) -> bytes:
        blocks = [{"type": "text", "text": text} for text in texts]
        return msgspec.json.encode({"content": blocks})

    assert scaling.echo_text_problem(result("hi"), "hi") is None
    wrong = scaling.echo_text_problem(result("ho"), "hi")
    assert wrong is not None and wrong.startswith("wrong echo: 2 characters")
    assert scaling.echo_text_problem(result("hi", "hi"), "hi") is not None
    assert scaling.echo_text_problem(b'{"content":{}}', "hi") is not None
    text = b'{"type":"text","text":"hi"}'
    both = b'{"content":[%s],"structuredContent":{"result":"hi"}}' % text
    assert scaling.echo_text_problem(both, "hi") is None
    other = b'{"content":[%s],"structuredContent":{"result":"ho"}}' % text
    assert scaling.echo_text_problem(other, "hi") is not None
    failed = b'{"content":[%s],"isError":true}' % text
    assert scaling.echo_text_problem(failed, "hi") is not None


def test_size_labels() -> None:
    labels = [scaling.size_label(size) for size in scaling.MESSAGE_SIZES]
    assert labels == ["1 KB", "10 KB", "100 KB", "1 MB"]


def test_flat_figures_are_regrouped_by_cell() -> None:
    contenders = [Contender(name, [name], {}) for name in scaling.CONTENDERS]
    samples = {
        name: [
            {
                scaling.key(cell, metric): float(cell * (index + 1))
                for cell in (1, 16)
                for metric in ("req_per_s", scaling.CALLS_MADE)
            }
        ]
        for index, name in enumerate(scaling.CONTENDERS)
    }
    entries, ratios = compare(
        samples,
        contenders,
        [scaling.key(c, "req_per_s") for c in (1, 16)],
        [scaling.key(c, scaling.CALLS_MADE) for c in (1, 16)],
    )
    cells = scaling.split_cells(entries, ratios, (1, 16), ["req_per_s"])
    assert list(cells) == ["1", "16"]
    sixteen = cells["16"]
    assert set(sixteen["contenders"]) == set(scaling.CONTENDERS)
    assert sixteen["contenders"]["ours"]["req_per_s"]["median"] == 16
    assert sixteen["contenders"]["Python SDK"][scaling.CALLS_MADE]["median"] == 48
    assert sixteen["ratios"] == {
        "ours/TypeScript SDK": {"req_per_s": 0.5},
        "ours/Python SDK": {"req_per_s": 0.333},
    }


def test_big_messages_cannot_deadlock_the_client() -> None:
    flooding = Contender(
        "flooding", [sys.executable, "-c", FLOODING_ECHO], dict(os.environ)
    )
    session = scaling.StdioSession(flooding, read_timeout=20.0)
    try:
        session.initialize()
        message = scaling.message_of(1_000_000)
        encoded = msgspec.json.encode(message)
        for _ in range(2):
            latency, reply = session.call(
                lambda request_id: scaling.echo_request(request_id, encoded)
            )
            assert latency > 0
            assert scaling.echo_text_problem(reply.result, message) is None
    finally:
        session.kill()


def test_a_wrong_tool_list_is_refused() -> None:
    impostor = Contender(
        "impostor", [sys.executable, "-c", SHORT_LIST], dict(os.environ)
    )
    with pytest.raises(ServerFailedError, match="1 tools, not tool_0000"):
        scaling.measure_tools(impostor, scaling.QUICK)
