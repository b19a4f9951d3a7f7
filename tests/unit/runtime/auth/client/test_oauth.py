"""`OAuthClientAuth` through `httpx.AsyncClient`: the whole flow against a
fake protected server and authorization server (`world.World`)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import anyio
import httpx
import msgspec
import pytest

from mcp_specgen_runtime.auth.client import (
    AuthorizationError,
    ClientMetadata,
    MemoryTokenStore,
    OAuthClientAuth,
    TokenSet,
)

from .world import MCP, PRM, World

LIMIT = 10.0
REDIRECT = "http://127.0.0.1:5555/callback"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def store() -> MemoryTokenStore:
    return MemoryTokenStore()


@pytest.fixture
def auth(world: World, store: MemoryTokenStore) -> OAuthClientAuth:
    return OAuthClientAuth(
        MCP,
        redirect_handler=world.redirect,
        callback=world.callback,
        client_metadata=ClientMetadata(client_name="t", redirect_uris=[REDIRECT]),
        store=store,
    )


@pytest.fixture
async def client(
    world: World, auth: OAuthClientAuth
) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(world.handle), auth=auth
    ) as http:
        yield http


def post(
    client: httpx.AsyncClient, method: str = "tools/list"
) -> Coroutine[Any, Any, httpx.Response]:
    return client.post(MCP, json={"jsonrpc": "2.0", "id": 1, "method": method})


@pytest.mark.anyio
async def test_a_401_runs_the_flow_and_the_request_is_retried(
    world: World, client: httpx.AsyncClient, store: MemoryTokenStore
) -> None:
    with anyio.fail_after(LIMIT):
        response = await post(client)
    assert response.status_code == 200
    assert world.log == [
        f"POST {MCP}",
        f"GET {PRM}",
        "GET https://auth.example.com/.well-known/oauth-authorization-server",
        "POST https://auth.example.com/register",
        "POST https://auth.example.com/token",
        f"POST {MCP}",
    ]
    (asked,) = world.authorizations
    # The scope of the challenge, plus offline_access which the server lists.
    assert asked["scope"] == "read offline_access"
    assert asked["resource"] == MCP
    stored = await store.get_tokens(MCP)
    assert stored is not None and response.json() == {"ok": stored.access_token}
    assert stored.issuer == "https://auth.example.com" and stored.resource == MCP
    assert await store.get_client(MCP, "https://auth.example.com") is not None


@pytest.mark.anyio
async def test_the_token_is_reused(world: World, client: httpx.AsyncClient) -> None:
    with anyio.fail_after(LIMIT):
        await post(client)
        world.log.clear()
        response = await post(client)
    assert response.status_code == 200
    assert world.log == [f"POST {MCP}"]
    assert len(world.authorizations) == 1


@pytest.mark.anyio
async def test_an_expiring_token_is_refreshed_before_the_request(
    world: World, client: httpx.AsyncClient, auth: OAuthClientAuth
) -> None:
    world.expires_in = 10  # within the 30 s leeway: refreshed at once
    with anyio.fail_after(LIMIT):
        await post(client)
        first = auth.tokens
        world.log.clear()
        response = await post(client)
    assert response.status_code == 200
    assert world.log == ["POST https://auth.example.com/token", f"POST {MCP}"]
    assert auth.tokens is not None and first is not None
    assert auth.tokens.access_token != first.access_token
    assert len(world.authorizations) == 1


@pytest.mark.anyio
async def test_a_401_with_a_refresh_token_refreshes_instead_of_asking_the_user(
    world: World, client: httpx.AsyncClient, auth: OAuthClientAuth
) -> None:
    with anyio.fail_after(LIMIT):
        await post(client)
        assert auth.tokens is not None
        del world.access[auth.tokens.access_token]  # revoked
        response = await post(client)
    assert response.status_code == 200
    assert len(world.authorizations) == 1


@pytest.mark.anyio
async def test_a_refused_refresh_falls_back_to_the_user(
    world: World, client: httpx.AsyncClient, auth: OAuthClientAuth
) -> None:
    with anyio.fail_after(LIMIT):
        await post(client)
        world.access.clear()
        world.refresh.clear()
        response = await post(client)
    assert response.status_code == 200
    assert len(world.authorizations) == 2


@pytest.mark.anyio
async def test_step_up_asks_for_the_union_of_scopes(
    world: World, client: httpx.AsyncClient
) -> None:
    with anyio.fail_after(LIMIT):
        await post(client)
        response = await post(client, "tools/call")
    assert response.status_code == 200
    first, second = world.authorizations
    assert first["scope"] == "read offline_access"
    assert second["scope"] == "read offline_access write"


@pytest.mark.anyio
async def test_step_up_is_bounded(world: World, client: httpx.AsyncClient) -> None:
    world.always_forbid = True
    with anyio.fail_after(LIMIT):
        response = await post(client)
    assert response.status_code == 403
    # The first authorization, then max_step_ups (2) more.
    assert len(world.authorizations) == 3


@pytest.mark.anyio
async def test_concurrent_requests_authorize_once(
    world: World, client: httpx.AsyncClient
) -> None:
    statuses: list[int] = []

    async def one() -> None:
        statuses.append((await post(client)).status_code)

    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tasks:
            for _ in range(5):
                tasks.start_soon(one)
    assert statuses == [200] * 5
    assert len(world.authorizations) == 1


@pytest.mark.anyio
async def test_concurrent_step_ups_ask_the_user_once(
    world: World, client: httpx.AsyncClient
) -> None:
    """A request refused for a scope that another request has meanwhile
    stepped up to is retried with the new token first."""
    statuses: list[int] = []

    async def one() -> None:
        statuses.append((await post(client, "tools/call")).status_code)

    with anyio.fail_after(LIMIT):
        await post(client)
        async with anyio.create_task_group() as tasks:
            for _ in range(5):
                tasks.start_soon(one)
    assert statuses == [200] * 5
    assert len(world.authorizations) == 2


@pytest.mark.anyio
async def test_step_ups_stay_bounded_across_concurrent_requests(
    world: World, client: httpx.AsyncClient
) -> None:
    """A scope the server never accepts: concurrent requests share the
    step-ups instead of each asking the user max_step_ups times."""
    world.always_forbid = True
    statuses: list[int] = []

    async def one() -> None:
        statuses.append((await post(client)).status_code)

    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tasks:
            for _ in range(2):
                tasks.start_soon(one)
    assert statuses == [403, 403]
    assert len(world.authorizations) == 3


@pytest.mark.anyio
async def test_a_new_authorization_server_gets_a_new_registration(
    world: World, client: httpx.AsyncClient
) -> None:
    with anyio.fail_after(LIMIT):
        await post(client)
        world.issuer = "https://auth2.example.com"
        world.access.clear()
        response = await post(client)
    assert response.status_code == 200
    first, second = world.authorizations
    assert world.clients[first["client_id"]] == "https://auth.example.com"
    assert world.clients[second["client_id"]] == "https://auth2.example.com"
    assert "POST https://auth2.example.com/register" in world.log


@pytest.mark.anyio
async def test_stored_tokens_are_used_from_the_start(
    world: World, auth: OAuthClientAuth, store: MemoryTokenStore
) -> None:
    world.access["saved"] = {"read"}
    await store.set_tokens(MCP, TokenSet(access_token="saved"))
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(world.handle), auth=auth
    ) as http:
        with anyio.fail_after(LIMIT):
            response = await post(http)
    assert response.json() == {"ok": "saved"}
    assert world.authorizations == []


@pytest.mark.anyio
async def test_a_403_without_insufficient_scope_is_returned(
    world: World, client: httpx.AsyncClient
) -> None:
    def forbid(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403, headers={"WWW-Authenticate": 'Bearer error="x"'})

    async with httpx.AsyncClient(
        transport=httpx.MockTransport(forbid), auth=client.auth
    ) as http:
        with anyio.fail_after(LIMIT):
            assert (await post(http)).status_code == 403
    assert world.authorizations == []


@pytest.mark.anyio
async def test_a_wrong_iss_stops_before_the_token_request(
    world: World, client: httpx.AsyncClient
) -> None:
    original = world.redirect

    async def forged(url: str) -> None:
        await original(url)
        assert world.location is not None
        world.location = world.location.replace("iss=https", "iss=http")

    client.auth.redirect_handler = forged  # type: ignore[union-attr]
    with anyio.fail_after(LIMIT), pytest.raises(AuthorizationError, match="comes from"):
        await post(client)
    assert not any(line.endswith("/token") for line in world.log)


@pytest.mark.anyio
async def test_the_retried_request_keeps_its_body(
    world: World, client: httpx.AsyncClient
) -> None:
    bodies: list[bytes] = []
    handle = world.handle

    def spy(request: httpx.Request) -> httpx.Response:
        if str(request.url) == MCP:
            bodies.append(request.read())
        return handle(request)

    async with httpx.AsyncClient(
        transport=httpx.MockTransport(spy), auth=client.auth
    ) as http:
        with anyio.fail_after(LIMIT):
            await post(http)
    assert len(bodies) == 2 and bodies[0] == bodies[1]
    assert msgspec.json.decode(bodies[1])["method"] == "tools/list"


def test_a_sync_client_is_refused(auth: OAuthClientAuth) -> None:
    with httpx.Client(transport=httpx.MockTransport(World().handle), auth=auth) as http:
        with pytest.raises(RuntimeError, match="AsyncClient"):
            http.get(MCP)


def test_a_redirect_uri_is_needed(world: World) -> None:
    with pytest.raises(ValueError, match="redirect_uri"):
        OAuthClientAuth(MCP, redirect_handler=world.redirect, callback=world.callback)


@pytest.mark.anyio
async def test_an_expired_token_without_refresh_is_sent_and_renewed(
    world: World, auth: OAuthClientAuth, store: MemoryTokenStore
) -> None:
    await store.set_tokens(
        MCP, TokenSet(access_token="old", expires_at=time.time() - 5)
    )
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(world.handle), auth=auth
    ) as http:
        with anyio.fail_after(LIMIT):
            response = await post(http)
    assert response.status_code == 200
    assert len(world.authorizations) == 1


@pytest.mark.parametrize(
    "uri", ["http://app.example.com/cb", "com.example.app:/cb", "https://"]
)
def test_redirect_uris_are_loopback_or_https(world: World, uri: str) -> None:
    with pytest.raises(ValueError, match="redirect"):
        OAuthClientAuth(
            MCP,
            redirect_handler=world.redirect,
            callback=world.callback,
            redirect_uri=uri,
        )


@pytest.mark.anyio
async def test_a_new_process_refreshes_with_the_stored_registration(
    world: World, auth: OAuthClientAuth, store: MemoryTokenStore
) -> None:
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(world.handle), auth=auth
    ) as http:
        with anyio.fail_after(LIMIT):
            await post(http)
    world.access.clear()  # the access token expired meanwhile
    again = OAuthClientAuth(
        MCP,
        redirect_handler=world.redirect,
        callback=world.callback,
        client_metadata=ClientMetadata(client_name="t", redirect_uris=[REDIRECT]),
        store=store,
    )
    async with httpx.AsyncClient(
        transport=httpx.MockTransport(world.handle), auth=again
    ) as http:
        with anyio.fail_after(LIMIT):
            response = await post(http)
    assert response.status_code == 200
    assert len(world.authorizations) == 1
    assert not any(line.endswith("/register") for line in world.log[6:])
