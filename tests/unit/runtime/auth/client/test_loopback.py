"""`LoopbackCallback`: a one-shot listener on 127.0.0.1 for the redirect."""

from __future__ import annotations

import anyio
import httpx
import pytest

from mcp_specgen_runtime.auth.client import (
    AuthorizationResponse,
    LoopbackCallback,
    loopback,
)

LIMIT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_receives_the_redirect_on_loopback() -> None:
    got: list[AuthorizationResponse] = []
    with anyio.fail_after(LIMIT):
        async with LoopbackCallback() as callback:
            uri = callback.redirect_uri
            assert uri.startswith("http://127.0.0.1:") and uri.endswith("/callback")

            async def receive() -> None:
                got.append(await callback("s1"))

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(receive)
                async with httpx.AsyncClient() as http:
                    missed = await http.get(uri.replace("/callback", "/favicon.ico"))
                    page = await http.get(f"{uri}?code=c1&state=s1&iss=https%3A%2F%2Fa")
                assert missed.status_code == 404
                assert page.status_code == 200 and "close this window" in page.text
    assert got == [AuthorizationResponse(code="c1", state="s1", iss="https://a")]


@pytest.mark.anyio
async def test_an_idle_connection_does_not_hold_up_the_redirect() -> None:
    """A browser's preconnect (or any local process) may open a connection
    and send nothing: the redirect on the next one is served all the same."""
    got: list[AuthorizationResponse] = []
    with anyio.fail_after(LIMIT):
        async with LoopbackCallback() as callback:
            uri = callback.redirect_uri

            async def receive() -> None:
                got.append(await callback("s1"))

            port = int(uri.split(":")[2].split("/")[0])
            async with (
                await anyio.connect_tcp("127.0.0.1", port),
                anyio.create_task_group() as tasks,
            ):
                tasks.start_soon(receive)
                async with httpx.AsyncClient() as http:
                    page = await http.get(f"{uri}?code=c1&state=s1")
                assert page.status_code == 200
    assert got == [AuthorizationResponse(code="c1", state="s1")]


@pytest.mark.anyio
async def test_an_idle_connection_is_closed_after_the_read_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(loopback, "READ_TIMEOUT", 0.05)
    with anyio.fail_after(LIMIT):
        async with LoopbackCallback() as callback, anyio.create_task_group() as tasks:
            tasks.start_soon(callback, "s1")
            port = int(callback.redirect_uri.split(":")[2].split("/")[0])
            async with await anyio.connect_tcp("127.0.0.1", port) as idle:
                with pytest.raises(anyio.EndOfStream):
                    await idle.receive()
            tasks.cancel_scope.cancel()


@pytest.mark.anyio
async def test_a_response_to_another_request_is_refused_and_waited_past() -> None:
    """Any local page can request the callback URI: only the `state` of the
    flow's own request ends the wait."""
    got: list[AuthorizationResponse] = []
    with anyio.fail_after(LIMIT):
        async with LoopbackCallback() as callback:
            uri = callback.redirect_uri

            async def receive() -> None:
                got.append(await callback("s1"))

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(receive)
                async with httpx.AsyncClient() as http:
                    forged = await http.get(f"{uri}?error=access_denied&state=s0")
                    stateless = await http.get(f"{uri}?code=c0")
                    odd = await http.get(f"{uri}?code=c0&state=%C3%A9")
                    page = await http.get(f"{uri}?code=c1&state=s1")
                assert [r.status_code for r in (forged, stateless, odd)] == [400] * 3
                assert page.status_code == 200
    assert got == [AuthorizationResponse(code="c1", state="s1")]


def test_the_uri_needs_the_listener() -> None:
    with pytest.raises(RuntimeError, match="enter"):
        _ = LoopbackCallback().redirect_uri
