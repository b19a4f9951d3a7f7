"""The JSON-RPC engine: requests, responses, cancellation, progress, end of stream."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from mcp_specgen_runtime.errors import (
    ProtocolError,
    TransportError,
)
from mcp_specgen_runtime.jsonrpc.connection import (
    Connection,
    RequestTimeoutError,
    current_request,
)
from mcp_specgen_runtime.jsonrpc.dispatch import Dispatcher
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_types import v2025_11_25 as rev
from tests.unit.runtime.jsonrpc.support import (
    LIMIT,
    EchoServer,
    Peer,
    connected,
    echo,
    notification,
    request,
    routes,
    serving,
)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Both backends: on asyncio requests run in plain tasks, elsewhere in the
    connection's task group."""
    backend: str = request.param
    return backend


# --- requests and responses -----------------------------------------------------


@pytest.mark.anyio
async def test_typed_calls_through_a_dispatcher_and_the_generated_client() -> None:
    async with connected(Dispatcher(EchoServer()).dispatch) as (_, client):
        result = await rev.Client(client).call_tool(
            name="echo", arguments={"message": "hi"}
        )
        assert result == rev.CallToolResult(content=[rev.TextContent(text="hi")])
        assert isinstance(await rev.Client(client).ping(), rev.EmptyResult)


@pytest.mark.anyio
async def test_ids_count_up_and_responses_may_come_in_any_order() -> None:
    ours, theirs = memory_pair()
    peer = Peer(theirs)
    results: dict[str, Any] = {}

    async def ask(name: str) -> None:
        results[name] = await connection.request(name, {"n": name}, dict)

    with anyio.fail_after(LIMIT):
        async with Connection(ours) as connection, anyio.create_task_group() as tasks:
            for name in ("a", "b", "c"):
                tasks.start_soon(ask, name)
            received = [await peer.receive() for _ in range(3)]
            assert sorted(m["id"] for m in received) == [1, 2, 3]
            for message in reversed(received):
                reply = {"echo": message["params"]["n"]}
                await peer.send(
                    {"jsonrpc": "2.0", "id": message["id"], "result": reply}
                )
    await theirs.aclose()
    assert results == {name: {"echo": name} for name in "abc"}


@pytest.mark.anyio
async def test_a_result_that_does_not_fit_is_a_protocol_error() -> None:
    async with connected(routes(echo=echo)) as (_, client):
        with pytest.raises(ProtocolError, match="CallToolResult"):
            await client.request("echo", {"content": 5}, rev.CallToolResult)


@pytest.mark.anyio
async def test_a_malformed_response_fails_its_request_and_gets_32600() -> None:
    ours, theirs = memory_pair()
    peer = Peer(theirs)
    with anyio.fail_after(LIMIT):
        async with Connection(ours) as connection, anyio.create_task_group() as tasks:

            async def ask() -> None:
                with pytest.raises(ProtocolError, match="both result and error"):
                    await connection.request("x", None, dict)

            tasks.start_soon(ask)
            sent = await peer.receive()
            error = {"code": 1, "message": "m"}
            reply = await peer.call(
                {"jsonrpc": "2.0", "id": sent["id"], "result": {}, "error": error}
            )
            assert reply["id"] is None and reply["error"]["code"] == -32600
    await theirs.aclose()


@pytest.mark.anyio
async def test_stray_responses_are_dropped_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, "mcp_specgen_runtime.jsonrpc")
    async with serving(routes()) as (_, peer):
        await peer.send({"jsonrpc": "2.0", "id": 41, "result": {}})
        await peer.send({"jsonrpc": "2.0", "id": "s", "result": {}})
        error = {"code": -32700, "message": "Parse error"}
        await peer.send({"jsonrpc": "2.0", "id": None, "error": error})
        await peer.assert_alive()
    assert "no pending request: 41" in caplog.text
    assert "peer reported an error: Parse error" in caplog.text


@pytest.mark.anyio
async def test_a_request_id_already_in_flight_is_refused() -> None:
    release = anyio.Event()

    async def wait(params: bytes | None) -> bytes:
        await release.wait()
        return b"{}"

    async with serving(routes(wait=wait)) as (_, peer):
        await peer.send(request(1, "wait"))
        reply = await peer.call(request(1, "wait"))
        assert reply["error"]["code"] == -32600 and "already in use" in str(reply)
        assert reply["id"] == 1  # the id is usable: JSON-RPC answers with it
        release.set()
        assert await peer.receive() == {"jsonrpc": "2.0", "id": 1, "result": {}}


@pytest.mark.anyio
async def test_a_thousand_requests_in_flight_both_ways_at_once() -> None:
    count = 1000

    def gated() -> Callable[[str, bytes | None], Awaitable[bytes | None]]:
        arrived = 0
        everyone = anyio.Event()

        async def handle(method: str, params: bytes | None) -> bytes:
            nonlocal arrived
            arrived += 1
            if arrived == count:
                everyone.set()
            await everyone.wait()  # all are in flight before any is answered
            return params or b"null"

        return handle

    async def ask(connection: Connection, n: int, results: dict[int, Any]) -> None:
        results[n] = await connection.request("echo", {"n": n}, dict)

    left_results: dict[int, Any] = {}
    right_results: dict[int, Any] = {}
    async with connected(gated(), gated()) as (left, right):
        async with anyio.create_task_group() as tasks:
            for n in range(count):
                tasks.start_soon(ask, left, n, left_results)
                tasks.start_soon(ask, right, n, right_results)
    expected = {n: {"n": n} for n in range(count)}
    assert left_results == expected and right_results == expected


# --- cancellation and timeouts --------------------------------------------------


@pytest.mark.anyio
async def test_a_cancelled_request_is_stopped_and_never_answered() -> None:
    started, stopped = anyio.Event(), anyio.Event()

    async def block(params: bytes | None) -> bytes:
        started.set()
        try:
            await anyio.Event().wait()
        finally:
            stopped.set()
        return b"{}"

    async with serving(routes(block=block)) as (_, peer):
        await peer.send(request(7, "block"))
        await started.wait()
        await peer.send(notification("notifications/cancelled", {"requestId": 7}))
        await stopped.wait()
        await anyio.wait_all_tasks_blocked()  # a reply would be on its way now
        await peer.assert_alive()


@pytest.mark.anyio
async def test_a_handler_finishing_despite_the_cancel_is_not_answered() -> None:
    started, release, finished = anyio.Event(), anyio.Event(), anyio.Event()

    async def stubborn(params: bytes | None) -> bytes:
        started.set()
        with anyio.CancelScope(shield=True):
            await release.wait()
        finished.set()
        return b"{}"

    async with serving(routes(stubborn=stubborn)) as (_, peer):
        await peer.send(request(7, "stubborn"))
        await started.wait()
        await peer.send(notification("notifications/cancelled", {"requestId": 7}))
        await peer.assert_alive(8)  # the cancel has been read
        release.set()
        await finished.wait()
        await anyio.wait_all_tasks_blocked()  # a reply would be on its way now
        await peer.assert_alive(9)


@pytest.mark.anyio
async def test_cancels_after_the_response_or_of_unknown_ids_are_harmless() -> None:
    async with serving(routes(echo=echo)) as (_, peer):
        assert (await peer.call(request(3, "echo", {})))["result"] == {}
        for params in ({"requestId": 3}, {"requestId": 99}, {"requestId": [1]}, {}):
            await peer.send(notification("notifications/cancelled", params))
        await peer.send(notification("notifications/cancelled"))
        await peer.assert_alive()


@pytest.mark.anyio
async def test_a_timed_out_request_cancels_and_drops_the_late_response(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, "mcp_specgen_runtime.jsonrpc")
    ours, theirs = memory_pair()
    peer = Peer(theirs)
    with anyio.fail_after(LIMIT):
        async with Connection(ours) as connection, anyio.create_task_group() as tasks:

            async def ask() -> None:
                with pytest.raises(RequestTimeoutError) as caught:
                    await connection.request("slow", None, dict, timeout=0.05)
                assert isinstance(caught.value, TimeoutError)
                assert caught.value.method == "slow"

            tasks.start_soon(ask)
            sent = await peer.receive()
            assert sent == {"jsonrpc": "2.0", "id": 1, "method": "slow"}
            cancel = await peer.receive()
            assert cancel["method"] == "notifications/cancelled"
            assert cancel["params"] == {"requestId": 1, "reason": "timed out"}
            await peer.send({"jsonrpc": "2.0", "id": 1, "result": {}})
            await peer.assert_alive()
    await theirs.aclose()
    assert "no pending request: 1" in caplog.text


@pytest.mark.anyio
async def test_requests_count_from_the_first_id_and_pending_ones_can_be_failed() -> (
    None
):
    ours, theirs = memory_pair()
    peer = Peer(theirs)
    with anyio.fail_after(LIMIT):
        async with (
            Connection(ours, first_request_id=2**40) as connection,
            anyio.create_task_group() as tasks,
        ):

            async def ask() -> None:
                with pytest.raises(TransportError, match="gone elsewhere"):
                    await connection.request("slow", None, dict)

            tasks.start_soon(ask)
            assert (await peer.receive())["id"] == 2**40
            tasks.start_soon(ask)
            assert (await peer.receive())["id"] == 2**40 + 1
            connection.fail_pending("gone elsewhere")
    await theirs.aclose()


@pytest.mark.anyio
async def test_cancelling_the_caller_sends_a_cancel_notification() -> None:
    ours, theirs = memory_pair()
    peer = Peer(theirs)
    with anyio.fail_after(LIMIT):
        async with Connection(ours) as connection, anyio.create_task_group() as tasks:
            scope = anyio.CancelScope()

            async def ask() -> None:
                with scope:
                    await connection.request("slow", {}, dict)

            tasks.start_soon(ask)
            assert (await peer.receive())["method"] == "slow"
            scope.cancel()
            cancel = await peer.receive()
            assert cancel["params"] == {
                "requestId": 1,
                "reason": "cancelled by the sender",
            }
    await theirs.aclose()


# --- progress and ping ----------------------------------------------------------


@pytest.mark.anyio
async def test_progress_reaches_the_requester_in_order() -> None:
    seen: list[Any] = []
    all_seen = anyio.Event()

    async def work(params: bytes | None) -> bytes:
        context = current_request()
        assert (context.method, context.request_id) == ("work", 1)
        assert context.progress_token == "tok"
        for step in (1, 2, 3):
            await context.report_progress(step, 3, f"step {step}")
        await context.report_progress(3.5)
        return b"{}"

    async def progress(params: bytes | None) -> None:
        seen.append(json.loads(params or b"null"))
        if len(seen) == 4:
            all_seen.set()

    async with connected(
        routes(work=work), routes(notifications__progress=progress)
    ) as (_, client):
        params = {"_meta": {"progressToken": "tok"}}
        assert await client.request("work", params, dict) == {}
        await all_seen.wait()
    assert seen == [
        *(
            {"progressToken": "tok", "progress": n, "total": 3, "message": f"step {n}"}
            for n in (1, 2, 3)
        ),
        {"progressToken": "tok", "progress": 3.5},
    ]


@pytest.mark.anyio
async def test_progress_must_increase_and_needs_a_token_to_be_sent() -> None:
    async def work(params: bytes | None) -> bytes:
        context = current_request()
        assert context.progress_token is None
        await context.report_progress(2)
        for backwards in (2, 1):
            with pytest.raises(ValueError, match="progress must increase"):
                await context.report_progress(backwards)
        return b'{"ok":true}'

    async with serving(routes(work=work)) as (_, peer):
        # Nothing but the response arrives: no token, no progress notification.
        reply = await peer.call(request(1, "work", {"_meta": {"other": 1}}))
        assert reply["result"] == {"ok": True}
        reply = await peer.call(request(2, "work", {"_meta": {"progressToken": []}}))
        assert reply["result"] == {"ok": True}
    with pytest.raises(RuntimeError, match="not inside"):
        current_request()


@pytest.mark.anyio
async def test_ping_is_answered_unless_the_handler_serves_it() -> None:
    async with serving(None) as (_, peer):
        await peer.assert_alive()
        reply = await peer.call(request(2, "tools/list"))
        assert reply["error"]["code"] == -32601
    async with serving(Dispatcher(EchoServer()).dispatch) as (_, peer):
        await peer.assert_alive()

    async def own_ping(params: bytes | None) -> bytes:
        return b'{"_meta":{"served":true}}'

    async with serving(routes(ping=own_ping)) as (_, peer):
        assert (await peer.call(request(1, "ping")))["result"] == {
            "_meta": {"served": True}
        }


# --- end of stream --------------------------------------------------------------


@pytest.mark.anyio
async def test_end_of_stream_fails_pending_requests_and_ends_the_connection() -> None:
    ours, theirs = memory_pair()
    peer = Peer(theirs)
    with anyio.fail_after(LIMIT):
        async with Connection(ours) as connection, anyio.create_task_group() as tasks:

            async def ask() -> None:
                with pytest.raises(TransportError):
                    await connection.request("x", None, dict)

            tasks.start_soon(ask)
            await peer.receive()
            await theirs.aclose()
            await connection.wait_closed()
            assert connection.closed
            with pytest.raises(TransportError):
                await connection.request("y", None, dict)
            with pytest.raises(TransportError):
                await connection.notify("z", None)


@pytest.mark.anyio
async def test_end_of_stream_lets_running_handlers_reply_first() -> None:
    """A stdio client may close stdin right after its last request: the
    requests already read are still answered (within drain_timeout)."""

    async def slow(params: bytes | None) -> bytes:
        await anyio.sleep(0.05)
        return b'{"late":true}'

    class HalfClosed:
        """Delivers two requests, then end of stream; keeps what is sent."""

        def __init__(self) -> None:
            self.incoming = [request(1, "slow"), request(2, "slow")]
            self.sent: list[Any] = []

        async def receive(self) -> bytes:
            if not self.incoming:
                raise anyio.EndOfStream
            return json.dumps(self.incoming.pop(0)).encode()

        async def send(self, message: bytes) -> None:
            self.sent.append(json.loads(message))

        async def aclose(self) -> None:
            pass

    transport = HalfClosed()
    with anyio.fail_after(LIMIT):
        await Connection(transport, routes(slow=slow)).run()
    assert sorted(reply["id"] for reply in transport.sent) == [1, 2]
    assert all(reply["result"] == {"late": True} for reply in transport.sent)


@pytest.mark.anyio
async def test_end_of_stream_cancels_running_handlers_and_run_returns() -> None:
    started, cancelled = anyio.Event(), anyio.Event()

    async def block(params: bytes | None) -> bytes:
        started.set()
        try:
            await anyio.Event().wait()
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return b"{}"

    ours, theirs = memory_pair()
    peer = Peer(theirs)
    connection = Connection(ours, routes(block=block), drain_timeout=0.1)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(connection.run)
            await peer.send(request(1, "block"))
            await started.wait()
            await theirs.aclose()
        # run() returned by itself, so the task group could finish.
    assert cancelled.is_set()
    with pytest.raises(RuntimeError, match="already running"):
        await connection.run()


@pytest.mark.anyio
async def test_leaving_the_context_closes_the_peer_too() -> None:
    ours, theirs = memory_pair(max_buffer_size=2)
    with anyio.fail_after(LIMIT):
        async with Connection(ours) as connection:
            await connection.notify("hello", {"x": 1})
            await connection.notify("bye", None)
        assert json.loads(await theirs.receive()) == notification("hello", {"x": 1})
        assert json.loads(await theirs.receive()) == notification("bye")
        with pytest.raises(anyio.EndOfStream):
            await theirs.receive()
        with pytest.raises(TransportError):
            await connection.request("late", None, dict)
    await theirs.aclose()


@pytest.mark.anyio
async def test_an_error_in_the_body_propagates_as_itself() -> None:
    ours, theirs = memory_pair()
    with anyio.fail_after(LIMIT), pytest.raises(KeyError):
        async with Connection(ours):
            raise KeyError("body")
    with pytest.raises(anyio.EndOfStream):
        await theirs.receive()
    await theirs.aclose()


# --- handlers that raise what is no Exception --------------------------------------


class Custom(BaseException):
    """Neither an `Exception` nor cancellation."""


@pytest.mark.parametrize("error", [SystemExit(1), KeyboardInterrupt(), Custom()])
@pytest.mark.anyio
async def test_a_handler_raising_a_base_exception_fails_only_its_request(
    error: BaseException,
) -> None:
    async def leave(params: bytes | None) -> bytes:
        raise error

    async def leave_quietly(params: bytes | None) -> None:
        raise error

    async with serving(routes(leave=leave, bye=leave_quietly, echo=echo)) as (_, peer):
        reply = await peer.call(request(1, "leave"))
        assert reply == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32603, "message": "Internal error"},
        }
        await peer.send(notification("bye"))
        assert (await peer.call(request(2, "echo", {"a": 1})))["result"] == {"a": 1}


# --- the limit of requests in flight ----------------------------------------------


@pytest.mark.anyio
async def test_requests_over_the_in_flight_limit_are_refused_at_once() -> None:
    async def hang(params: bytes | None) -> bytes:
        await anyio.sleep_forever()
        raise AssertionError

    async with serving(routes(hang=hang), max_in_flight=3) as (connection, peer):
        assert connection.max_in_flight == 3
        for n in range(3):
            await peer.send(request(n, "hang"))
        refused = await peer.call(request(3, "hang"))
        assert refused["id"] == 3
        assert refused["error"]["code"] == -32603
        assert "3 requests in flight" in refused["error"]["message"]
        assert "max_in_flight" in refused["error"]["message"]
        assert refused["error"]["data"] == {"maxInFlight": 3}
        # Notifications still go through: cancelling one frees its slot.
        await peer.send(notification("notifications/cancelled", {"requestId": 0}))
        await peer.send(request(4, "hang"))
        refused = await peer.call(request(5, "hang"))
        assert refused["id"] == 5 and refused["error"]["code"] == -32603


@pytest.mark.anyio
async def test_the_in_flight_limit_counts_batch_items_and_must_be_positive() -> None:
    async def hang(params: bytes | None) -> bytes:
        await anyio.sleep_forever()
        raise AssertionError

    options: dict[str, Any] = {"max_in_flight": 2, "allow_batches": True}
    async with serving(routes(hang=hang, echo=echo), **options) as (_, peer):
        await peer.send(request(0, "hang"))
        reply = await peer.call([request(1, "echo"), request(2, "echo")])
        assert sorted((item["id"], "result" in item) for item in reply) == [
            (1, True),
            (2, False),
        ]
    ours, theirs = memory_pair()
    for limit in (0, -1):
        with pytest.raises(ValueError, match="max_in_flight must be positive"):
            Connection(ours, max_in_flight=limit)
    await ours.aclose()
    await theirs.aclose()


class StuckTransport:
    """Hands out the given messages; sends block until `release` is set."""

    def __init__(self, *messages: bytes) -> None:
        self.messages = list(messages)
        self.release = anyio.Event()
        self.read = 0
        self.sent: list[bytes] = []
        self.all_sent = anyio.Event()
        self.expected = len(messages)

    async def send(self, message: bytes) -> None:
        await self.release.wait()
        self.sent.append(message)
        if len(self.sent) == self.expected:
            self.all_sent.set()

    async def receive(self) -> bytes:
        if not self.messages:
            await anyio.sleep_forever()
        self.read += 1
        return self.messages.pop(0)

    async def aclose(self) -> None:
        pass


@pytest.mark.anyio
async def test_error_answers_waiting_to_be_written_pause_reading() -> None:
    """A peer flooding bad input without reading the answers costs bounded
    memory: past `max_in_flight` unsent answers the connection stops reading."""
    transport = StuckTransport(*[b"garbage"] * 10)
    with anyio.fail_after(LIMIT):
        async with Connection(transport, max_in_flight=3):
            await anyio.wait_all_tasks_blocked()
            assert transport.read == 3
            transport.release.set()
            await transport.all_sent.wait()
    assert all(b"-32700" in sent for sent in transport.sent)
