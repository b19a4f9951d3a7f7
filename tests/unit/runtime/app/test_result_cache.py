"""`ResultCache`: read-only results kept as the 2026 `ttlMs`/`cacheScope`
hints say, per caller where the scope is private."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.app.middleware import Call, CallNext, Result
from mcp_specgen_runtime.app.result_cache import ResultCache


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_app(cache: ResultCache, *inner: Any) -> tuple[App, list[str]]:
    reads: list[str] = []
    app = App("demo", middleware=[cache, *inner])

    @app.resource("counter://reads")
    def counter() -> str:
        reads.append("read")
        return f"read {len(reads)}"

    @app.tool()
    def echo(message: str) -> str:
        return message

    return app, reads


async def read(client: Client) -> str:
    result = await client.read_resource("counter://reads")
    return result.contents[0].text  # type: ignore[union-attr]


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", "2026-07-28"])
async def test_a_result_is_kept_for_its_ttl(version: str) -> None:
    clock = Clock()
    cache = ResultCache(ttl_ms=1000, clock=clock)
    app, reads = make_app(cache)
    async with Client(app, versions=[version]) as client:
        assert await read(client) == "read 1"
        clock.now += 0.999
        assert await read(client) == "read 1"
        clock.now += 0.001
        assert await read(client) == "read 2"
    assert len(reads) == 2 and cache.hits == 1


@pytest.mark.anyio
async def test_2026_clients_are_told_the_caches_hints() -> None:
    clock = Clock()
    app, _ = make_app(ResultCache(ttl_ms=1000, scope="public", clock=clock))
    async with Client(app, versions=["2026-07-28"]) as client:
        first = await client.read_resource("counter://reads")
        clock.now += 0.25
        second = await client.read_resource("counter://reads")
    assert (first.ttl_ms, first.cache_scope) == (1000, "public")
    assert (second.ttl_ms, second.cache_scope) == (750, "public")


@pytest.mark.anyio
async def test_private_results_are_not_shared_between_callers() -> None:
    app, reads = make_app(ResultCache(ttl_ms=60_000, clock=Clock()))
    async with (
        Client(app, versions=["2025-11-25"]) as first,
        Client(app, versions=["2025-11-25"]) as second,
    ):
        assert await read(first) == "read 1"
        assert await read(second) == "read 2"
        assert await read(first) == "read 1"
    assert len(reads) == 2


@pytest.mark.anyio
async def test_public_results_are_shared() -> None:
    app, reads = make_app(ResultCache(ttl_ms=60_000, scope="public", clock=Clock()))
    async with (
        Client(app, versions=["2026-07-28"]) as first,
        Client(app, versions=["2026-07-28"]) as second,
    ):
        assert await read(first) == "read 1"
        assert await read(second) == "read 1"
    assert len(reads) == 1


def hinted(ttl_ms: int, scope: str) -> Any:
    """Inner middleware giving 2026 results hints of their own."""

    async def middleware(call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        body = result.json()
        if call.era == "modern" and "ttlMs" in body:
            body.update(ttlMs=ttl_ms, cacheScope=scope)
            return Result(msgspec.json.encode(body))
        return result

    return middleware


@pytest.mark.anyio
async def test_a_results_own_hints_are_honoured() -> None:
    clock = Clock()
    cache = ResultCache(clock=clock)  # no policy: the results' word only
    app, _ = make_app(cache, hinted(500, "public"))
    async with (
        Client(app, versions=["2026-07-28"]) as first,
        Client(app, versions=["2026-07-28"]) as second,
    ):
        assert await read(first) == "read 1"
        assert await read(second) == "read 1"  # public: shared
        clock.now += 0.5
        assert await read(second) == "read 2"  # its ttl is over
    async with Client(app, versions=["2025-11-25"]) as legacy:
        assert await read(legacy) == "read 3"
        assert await read(legacy) == "read 4"  # no hints, no policy: not kept


@pytest.mark.anyio
async def test_a_private_hint_is_never_shared_whatever_the_scope() -> None:
    cache = ResultCache(ttl_ms=60_000, scope="public", clock=Clock())
    app, reads = make_app(cache, hinted(30_000, "private"))
    async with (
        Client(app, versions=["2026-07-28"]) as first,
        Client(app, versions=["2026-07-28"]) as second,
    ):
        assert await read(first) == "read 1"
        assert await read(second) == "read 2"
        assert await read(first) == "read 1"
    assert len(reads) == 2


@pytest.mark.anyio
async def test_list_changes_and_resource_updates_make_entries_stale() -> None:
    cache = ResultCache(ttl_ms=60_000, clock=Clock())
    app, _ = make_app(cache)
    async with Client(app, versions=["2025-11-25"]) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["echo"]

        @app.tool()
        def other() -> str:
            return "x"

        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["echo", "other"]
        assert await read(client) == "read 1"
        assert await read(client) == "read 1"
        await app.notify_resource_updated("counter://reads")
        assert await read(client) == "read 2"


@pytest.mark.anyio
async def test_tool_calls_and_errors_are_never_kept() -> None:
    cache = ResultCache(ttl_ms=60_000, clock=Clock())
    app, _ = make_app(cache)
    async with Client(app, versions=["2026-07-28"]) as client:
        await client.call_tool("echo", {"message": "a"})
        assert (await client.call_tool("echo", {"message": "b"})).content
        for _ in range(2):
            with pytest.raises(Exception, match="Resource not found"):
                await client.read_resource("counter://nope")
    assert cache.hits == 0


def test_only_read_only_methods_and_known_scopes() -> None:
    with pytest.raises(ValueError):
        ResultCache(methods=["tools/call"])
    with pytest.raises(ValueError):
        ResultCache(scope="everyone")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ResultCache(ttl_ms=-1)
