"""An stdio MCP server (PyPI `mcp==2.3.0`) whose tools ask the client back.

Run it with the peer venv's python (`benchmarks.peers.ensure_python_peers()`):

    .cache/peers/venv/bin/python tests/peers/programs/python_sdk_asking_server.py

Its tools fill parameters with `Resolve(...)` resolvers returning the SDK's
request markers, so the SDK picks the transport from the negotiated version:
up to 2025-11-25 each question is a standalone server→client request sent
mid-call (`elicitation/create`, `sampling/createMessage`, `roots/list`); from
2026-07-28 the questions are batched into one `InputRequiredResult` and the
call resumes when the client retries with `inputResponses`/`requestState`.

- `ask_name()`: elicits `{"name": str}`, answers "Hello, <name>!";
- `ask_llm(prompt)`: samples, answers "<model> said: <text>";
- `ask_roots()`: lists the roots, answers "roots: <uri>, <uri>...";
- `ask_all(prompt)`: the three at once, answers the three lines joined.
"""

from typing import Annotated

from mcp.server.mcpserver import Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp_types import (
    CreateMessageResult,
    ListRootsResult,
    SamplingMessage,
    TextContent,
)
from pydantic import BaseModel

server = MCPServer("python-sdk-asking", version="1.0.0")


class NameForm(BaseModel):
    """The elicited form."""

    name: str


def elicit_name() -> Elicit[NameForm]:
    """Ask the user for a name."""
    return Elicit("What is your name?", NameForm)


def sample_llm(prompt: str) -> Sample:
    """Ask the client's LLM to complete the prompt."""
    message = SamplingMessage(
        role="user", content=TextContent(type="text", text=prompt)
    )
    return Sample([message], max_tokens=50)


def list_roots() -> ListRoots:
    """Ask the client for its roots."""
    return ListRoots()


def greeting(form: NameForm) -> str:
    return f"Hello, {form.name}!"


def sampled(result: CreateMessageResult) -> str:
    content = result.content
    text = content.text if isinstance(content, TextContent) else repr(content)
    return f"{result.model} said: {text}"


def rooted(result: ListRootsResult) -> str:
    return "roots: " + ", ".join(str(root.uri) for root in result.roots)


@server.tool()
def ask_name(form: Annotated[NameForm, Resolve(elicit_name)]) -> str:
    """Greet the user by the name elicited."""
    return greeting(form)


@server.tool()
def ask_llm(
    prompt: str, result: Annotated[CreateMessageResult, Resolve(sample_llm)]
) -> str:
    """Answer what the client's LLM said to the prompt."""
    return sampled(result)


@server.tool()
def ask_roots(result: Annotated[ListRootsResult, Resolve(list_roots)]) -> str:
    """Answer the client's roots."""
    return rooted(result)


@server.tool()
def ask_all(
    prompt: str,
    form: Annotated[NameForm, Resolve(elicit_name)],
    result: Annotated[CreateMessageResult, Resolve(sample_llm)],
    roots: Annotated[ListRootsResult, Resolve(list_roots)],
) -> str:
    """Ask the three questions in one call."""
    return "\n".join((greeting(form), sampled(result), rooted(roots)))


if __name__ == "__main__":
    server.run("stdio")
