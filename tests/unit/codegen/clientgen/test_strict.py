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


@pytest.mark.timeout(600)
def test_pyright_strict_and_mypy_strict(tmp_path: Path) -> None:
    generate_client(LISTING, tmp_path, "odd_client")
    (tmp_path / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "pythonVersion": "3.11"})
    )
    for command in (
        [str(BIN / "pyright"), "--pythonpath", sys.executable, "odd_client"],
        [str(BIN / "mypy"), "--strict", "--no-incremental", "odd_client"],
        [str(BIN / "ruff"), "check", "--no-cache", "--select", "E,F", "odd_client"],
    ):
        checked = subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
    client = (tmp_path / "odd_client" / "client.py").read_text()
    assert "async def client_(" in client
    assert "async def do_it(" in client
    assert "timeout_: str," in client
