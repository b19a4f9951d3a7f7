"""The rendered package against an `App` in this process: calls, wire
names, URI templates, validation of structured results, determinism, and
`check_client` finding stale, missing and orphaned files."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import msgspec
import pytest

from mcp_specgen.clientgen.emit import render_client
from mcp_specgen.clientgen.inspect import ClientGenError, Listing, listing_of
from mcp_specgen.clientgen.run import check_client, generate_client
from mcp_specgen_runtime import Client
from mcp_specgen_runtime.app import App


class Point(msgspec.Struct):
    x: int
    y: int


class BadPoint(msgspec.Struct):
    x: str
    y: int


def make_app(*, bad: bool = False) -> App:
    app = App("geo-app", version="1.0")

    if bad:

        @app.tool()
        def move(dx: int, fromTop: int = 0) -> BadPoint:
            """Move the point."""
            return BadPoint(x="far", y=fromTop)

    else:

        @app.tool()
        def move(dx: int, fromTop: int = 0) -> Point:
            """Move the point."""
            return Point(x=dx, y=fromTop)

    @app.tool()
    def origin() -> str:
        """A tool without parameters."""
        return "0,0"

    @app.resource("files://{+path}{?rev}")
    def file(path: str, rev: str = "") -> str:
        """A file at a revision."""
        return f"{path}@{rev}"

    return app


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def listing_for(app: App) -> Listing:
    async with Client(app) as client:
        return await listing_of(client)


def load(out: Path, package: str) -> ModuleType:
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(out))


@pytest.mark.anyio
async def test_calls_map_names_and_decode_results(tmp_path: Path) -> None:
    listing = await listing_for(make_app())
    generate_client(listing, tmp_path, "geo_one")
    package = load(tmp_path, "geo_one")
    async with package.GeoAppClient(make_app()) as client:
        assert await client.move(dx=3, from_top=4) == package.MoveResult(x=3, y=4)
        assert (await client.origin()).content[0].text == "0,0"
        read = await client.read_file(path="a/b c", rev="v1")
        assert read.contents[0].uri == "files://a/b%20c?rev=v1"
    async with package.GeoAppClient(make_app(bad=True)) as client:
        with pytest.raises(msgspec.ValidationError):
            await client.move(dx=1)


@pytest.mark.anyio
async def test_an_open_client_is_wrapped_not_closed(tmp_path: Path) -> None:
    generate_client(await listing_for(make_app()), tmp_path, "geo_two")
    package = load(tmp_path, "geo_two")
    async with Client(make_app()) as plain:
        async with package.GeoAppClient(plain) as typed:
            assert typed.client is plain
        assert [t.name for t in await plain.list_all_tools()] == ["move", "origin"]


@pytest.mark.anyio
async def test_rendering_is_deterministic_and_headed(tmp_path: Path) -> None:
    listing = await listing_for(make_app())
    files = render_client(listing, "geo")
    assert files == render_client(listing, "geo")
    client = files["geo/client.py"]
    assert "# server: geo-app 1.0\n" in client
    assert f"# protocol revision: {listing.revision}\n" in client
    assert sorted(files) == [
        "geo/__init__.py",
        "geo/client.py",
        "geo/mcp-client.lock",
        "geo/py.typed",
        "geo/types.py",
    ]
    with pytest.raises(ClientGenError, match="not a Python package name"):
        render_client(listing, "not-a-name")


@pytest.mark.anyio
async def test_check_finds_stale_missing_and_orphaned_files(tmp_path: Path) -> None:
    listing = await listing_for(make_app())
    with pytest.raises(ClientGenError, match=r"mcp-client\.lock is missing"):
        check_client(listing, tmp_path, "geo")
    generate_client(listing, tmp_path, "geo")
    assert check_client(listing, tmp_path, "geo").in_sync
    (tmp_path / "geo" / "types.py").write_text("")
    (tmp_path / "geo" / "py.typed").unlink()
    (tmp_path / "geo" / "extra.py").write_text("")
    outcome = check_client(listing, tmp_path, "geo")
    assert outcome.changed == [
        "geo/extra.py (orphaned)",
        "geo/py.typed (missing)",
        "geo/types.py (stale)",
    ]
    assert outcome.drifted == []
    assert generate_client(listing, tmp_path, "geo").changed == [
        "geo/extra.py",
        "geo/py.typed",
        "geo/types.py",
    ]
    assert check_client(listing, tmp_path, "geo").in_sync


@pytest.mark.anyio
async def test_every_page_is_read() -> None:
    app = App("paged", version="1", page_size=1)
    for name in ("a", "b", "c"):
        app.tool(name=name)(lambda: "x")
        app.prompt(name=f"p{name}")(lambda: "x")
        app.resource(f"r://{name}/{{id}}", name=f"r{name}")(lambda id: id)
    listing = await listing_for(app)
    assert [t["name"] for t in listing.tools] == ["a", "b", "c"]
    assert [p["name"] for p in listing.prompts] == ["pa", "pb", "pc"]
    assert [t["name"] for t in listing.templates] == ["ra", "rb", "rc"]
