"""Without the `http` extra, serving or connecting over HTTP fails with one
ImportError saying what to install (`extra.py`)."""

from __future__ import annotations

import sys

import anyio
import pytest

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.transports.http.extra import HTTP_EXTRA
from mcp_specgen_runtime.transports.http.server import run_uvicorn


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_serving_without_uvicorn_says_to_install_the_http_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    with pytest.raises(ImportError) as caught:
        run_uvicorn(
            object(), host="127.0.0.1", port=0, log_level="error", shutdown_timeout_s=1
        )
    assert caught.value.name == "uvicorn"
    assert (
        str(caught.value) == f"HTTP needs uvicorn, which is not installed: {HTTP_EXTRA}"
    )


@pytest.mark.anyio
async def test_a_client_of_a_url_without_httpx_says_to_install_the_http_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    for name in list(sys.modules):  # imported afresh, without httpx
        if name.startswith("mcp_specgen_runtime.transports.http.client"):
            monkeypatch.delitem(sys.modules, name)
    with anyio.fail_after(10), pytest.raises(ImportError) as caught:
        async with Client("http://127.0.0.1:9/mcp"):
            pytest.fail("connected without httpx")
    assert caught.value.name == "httpx"
    assert (
        str(caught.value) == f"HTTP needs httpx, which is not installed: {HTTP_EXTRA}"
    )
