"""Where the OAuth client keeps tokens and registrations.

Tokens are kept per MCP server (its URL); registrations per MCP server and
authorization server, since a client id is only valid at the server that
issued it. `MemoryTokenStore` is the default; `FileTokenStore` keeps them in
one JSON file (mode 0600) across runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

import anyio
import msgspec

from .documents import ClientInformation, TokenSet

__all__ = ["FileTokenStore", "MemoryTokenStore", "TokenStore"]


class TokenStore(Protocol):
    """Storage of tokens and client registrations."""

    async def get_tokens(self, server: str) -> TokenSet | None:
        """The tokens for MCP server `server`, if any."""
        ...

    async def set_tokens(self, server: str, tokens: TokenSet | None) -> None:
        """Keep (or, with None, forget) the tokens for `server`."""
        ...

    async def get_client(self, server: str, issuer: str) -> ClientInformation | None:
        """The registration at `issuer` made for `server`, if any."""
        ...

    async def set_client(
        self, server: str, issuer: str, client: ClientInformation
    ) -> None:
        """Keep the registration at `issuer` made for `server`."""
        ...


class _Contents(msgspec.Struct, kw_only=True):
    tokens: dict[str, TokenSet] = msgspec.field(default_factory=dict[str, TokenSet])
    clients: dict[str, dict[str, ClientInformation]] = msgspec.field(
        default_factory=dict[str, dict[str, ClientInformation]]
    )

    def put_tokens(self, server: str, tokens: TokenSet | None) -> None:
        if tokens is None:
            self.tokens.pop(server, None)
        else:
            self.tokens[server] = tokens

    def put_client(self, server: str, issuer: str, client: ClientInformation) -> None:
        self.clients.setdefault(server, {})[issuer] = client


class MemoryTokenStore:
    """Tokens and registrations in memory, for the life of the process."""

    def __init__(self) -> None:
        self._contents = _Contents()

    async def get_tokens(self, server: str) -> TokenSet | None:
        return self._contents.tokens.get(server)

    async def set_tokens(self, server: str, tokens: TokenSet | None) -> None:
        self._contents.put_tokens(server, tokens)

    async def get_client(self, server: str, issuer: str) -> ClientInformation | None:
        return self._contents.clients.get(server, {}).get(issuer)

    async def set_client(
        self, server: str, issuer: str, client: ClientInformation
    ) -> None:
        self._contents.put_client(server, issuer, client)


class FileTokenStore:
    """Tokens and registrations in one JSON file, readable by its owner only.

    Each write replaces the file atomically; the file holds secrets (refresh
    tokens, client secrets), so keep it out of shared folders.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = anyio.Lock()

    def _read(self) -> _Contents:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return _Contents()
        return msgspec.json.decode(data, type=_Contents)

    def _write(self, contents: _Contents) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        scratch = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(msgspec.json.encode(contents))
        os.replace(scratch, self.path)

    async def get_tokens(self, server: str) -> TokenSet | None:
        contents = await anyio.to_thread.run_sync(self._read)
        return contents.tokens.get(server)

    async def set_tokens(self, server: str, tokens: TokenSet | None) -> None:
        async with self._lock:
            contents = await anyio.to_thread.run_sync(self._read)
            contents.put_tokens(server, tokens)
            await anyio.to_thread.run_sync(self._write, contents)

    async def get_client(self, server: str, issuer: str) -> ClientInformation | None:
        contents = await anyio.to_thread.run_sync(self._read)
        return contents.clients.get(server, {}).get(issuer)

    async def set_client(
        self, server: str, issuer: str, client: ClientInformation
    ) -> None:
        async with self._lock:
            contents = await anyio.to_thread.run_sync(self._read)
            contents.put_client(server, issuer, client)
            await anyio.to_thread.run_sync(self._write, contents)
