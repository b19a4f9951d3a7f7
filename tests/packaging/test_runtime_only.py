"""`pip install mcp-specgen-runtime[http]`: servers and clients run, and the
generator is not there at all (no `mcp-codegen`, no black, jinja2,
jsonschema; click is there only as uvicorn's own requirement)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.packaging.dists import outside_env, run

SERVER = '''
import sys

from mcp_specgen_runtime.app import App

app = App("tiny", version="1.0")


@app.tool()
async def echo(message: str) -> str:
    """Return the message."""
    return message


if __name__ == "__main__":
    app.run()
'''

CLIENT = """
import sys

import anyio

from mcp_specgen_runtime import Client
from mcp_specgen_runtime.transports.http.server import serve_http  # the extra


async def main() -> None:
    with anyio.fail_after(60):
        async with Client([sys.executable, "server.py"]) as client:
            result = await client.call_tool("echo", {"message": "hi"})
            print(client.server_info.name, result.content[0].text)


anyio.run(main)
"""


@pytest.fixture(scope="module")
def env(outside: Path) -> dict[str, str]:
    return outside_env(outside / "cache")


def test_pip_check_passes(runtime_bin: Path) -> None:
    run(str(runtime_bin / "python"), "-m", "pip", "check")


def test_a_server_of_the_runtime_answers_a_client_of_the_runtime(
    runtime_bin: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    (tmp_path / "server.py").write_text(SERVER)
    (tmp_path / "client.py").write_text(CLIENT)
    shown = run(str(runtime_bin / "python"), "client.py", cwd=tmp_path, env=env)
    assert shown == "tiny hi\n"


def test_the_generator_is_absent(runtime_bin: Path, env: dict[str, str]) -> None:
    assert not (runtime_bin / "mcp-codegen").exists()
    script = (
        "import importlib.util as u\n"
        "names = ('black', 'jinja2', 'jsonschema', 'mcp_specgen')\n"
        "print(sorted(n for n in names if u.find_spec(n)))\n"
    )
    assert run(str(runtime_bin / "python"), "-c", script, env=env) == "[]\n"
