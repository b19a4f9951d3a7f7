"""The token stores, one contract for each."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_specgen_runtime.auth.client.documents import ClientInformation, TokenSet
from mcp_specgen_runtime.auth.client.storage import (
    FileTokenStore,
    MemoryTokenStore,
    TokenStore,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


Factory = Callable[[Path], TokenStore]
STORES: dict[str, Factory] = {
    "memory": lambda folder: MemoryTokenStore(),
    "file": lambda folder: FileTokenStore(folder / "sub" / "tokens.json"),
}


@pytest.fixture(params=sorted(STORES))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> TokenStore:
    return STORES[request.param](tmp_path)


@pytest.mark.anyio
async def test_tokens_per_server(store: TokenStore) -> None:
    assert await store.get_tokens("https://a/mcp") is None
    tokens = TokenSet(access_token="x", refresh_token="r", expires_at=5.0)
    await store.set_tokens("https://a/mcp", tokens)
    assert await store.get_tokens("https://a/mcp") == tokens
    assert await store.get_tokens("https://b/mcp") is None
    await store.set_tokens("https://a/mcp", None)
    assert await store.get_tokens("https://a/mcp") is None


@pytest.mark.anyio
async def test_clients_per_server_and_issuer(store: TokenStore) -> None:
    one = ClientInformation(client_id="1", issuer="https://as1")
    two = ClientInformation(client_id="2", client_secret="s", issuer="https://as2")
    await store.set_client("https://a/mcp", "https://as1", one)
    await store.set_client("https://a/mcp", "https://as2", two)
    assert await store.get_client("https://a/mcp", "https://as1") == one
    assert await store.get_client("https://a/mcp", "https://as2") == two
    assert await store.get_client("https://b/mcp", "https://as1") is None


@pytest.mark.anyio
async def test_the_file_survives_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    await FileTokenStore(path).set_tokens("s", TokenSet(access_token="x"))
    assert await FileTokenStore(path).get_tokens("s") == TokenSet(access_token="x")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
