"""A package from awkward names and shapes passes pyright (strict) and
mypy --strict: parameters named like the method's own (`self`, `timeout`),
like locals or modules (`result`, `arguments`, `typing`), keywords, wire names
that are not identifiers, nested definitions, unions and enums."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_specgen.clientgen.inspect import Listing
from mcp_specgen.clientgen.run import generate_client

BIN = Path(sys.executable).parent

AWKWARD = {
    "type": "object",
    "properties": {
        name: {"type": "string"}
        for name in ("self", "timeout", "result", "value", "arguments", "typing")
    }
    | {
        "class": {"type": "integer", "minimum": 0},
        "io.example/logLevel": {"enum": ["debug", "info"]},
        "$schema": {"type": ["string", "null"]},
        "where": {"$ref": "#/$defs/Place"},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "extra": {"type": "object", "additionalProperties": {"type": "number"}},
    },
    "required": ["self", "class"],
    "$defs": {
        "Place": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "near": {"anyOf": [{"$ref": "#/$defs/Place"}, {"type": "null"}]},
            },
            "required": ["city"],
        }
    },
}

LISTING = Listing(
    server_name="odd/names server",
    server_version="0.0.1",
    revision="2025-11-25",
    tools=[
        {
            "name": "do.it",
            "description": 'Quotes """ and \\ backslashes.',
            "inputSchema": AWKWARD,
            "outputSchema": {
                "type": "object",
                "properties": {"result": {"type": "string"}, "self": {}},
                "required": ["result"],
            },
        },
        {"name": "client", "inputSchema": {"type": "object"}},
    ],
    prompts=[
        {
            "name": "ask",
            "arguments": [
                {"name": "timeout", "required": True},
                {"name": "uri", "required": False},
            ],
        }
    ],
    templates=[{"name": "doc", "uriTemplate": "doc://{self}/{uri}{?timeout}"}],
)


def _check(folder: Path, package: str, *, mypy: bool = True) -> None:
    (folder / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "pythonVersion": "3.11"})
    )
    commands = [
        [str(BIN / "pyright"), "--pythonpath", sys.executable, package],
        [str(BIN / "ruff"), "check", "--no-cache", "--select", "E,F", package],
    ]
    if mypy:
        commands.append([str(BIN / "mypy"), "--strict", "--no-incremental", package])
    for command in commands:
        checked = subprocess.run(
            command, cwd=folder, capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr


def _only(**parts: list[dict[str, object]]) -> Listing:
    return Listing(
        server_name="one-shape",
        server_version="1",
        revision="2025-11-25",
        tools=parts.get("tools", []),
        prompts=parts.get("prompts", []),
        templates=parts.get("templates", []),
    )


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    "listing",
    [
        _only(tools=[{"name": "add", "inputSchema": {"type": "object"}}]),
        _only(prompts=[{"name": "hi"}]),
        _only(prompts=[{"name": "hi", "arguments": [{"name": "who"}]}]),
        _only(templates=[{"name": "doc", "uriTemplate": "doc://{id}"}]),
        _only(),
    ],
    ids=["tools-only", "prompt-no-args", "prompts-only", "templates-only", "empty"],
)
def test_every_import_is_used_in_each_shape(tmp_path: Path, listing: Listing) -> None:
    generate_client(listing, tmp_path, "shape_client")
    _check(tmp_path, "shape_client", mypy=False)


@pytest.mark.timeout(600)
def test_pyright_strict_and_mypy_strict(tmp_path: Path) -> None:
    generate_client(LISTING, tmp_path, "odd_client")
    _check(tmp_path, "odd_client")
    client = (tmp_path / "odd_client" / "client.py").read_text()
    assert "async def client_(" in client
    assert "async def do_it(" in client
    assert "timeout_: str," in client
