"""The server each instance of the multi-instance tests and benchmark runs.

    python -m benchmarks.cluster_server --port 8001 --name a [--redis URL --prefix P]

An `App` serving every revision over Streamable HTTP with five tools:

- `echo(message)`: the message back (the benchmark's call);
- `chatty(tag, steps, delay_ms)`: for each step a progress notification and
  an info log message (`"<tag> <step>"`), `delay_ms` apart, then `"<tag> done
  <steps>"` (so a stream is in flight long enough to be cut by a stopped
  instance, and each notification names its call);
- `ask(question)`: asks the client for a `name` (elicitation: a request over
  the session in the legacy revisions, an `InputRequiredResult` round in
  2026-07-28), then `"hello <name>"`;
- `slow(seconds)`: sleeps, then `"slept <seconds>"`; callable as a task;
- `whoami()`: this instance's `--name` (tests see where a call landed).

With `--redis URL` the instance is one of a cluster (`App(redis=URL)`, the
runtime's one switch: tasks, shared keys, legacy sessions and their streams in
Redis under `--prefix`); without it, everything stays in this process's
memory (a single instance, today's default). Prints `ready <port>` once
listening (the harness also polls `/healthz`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

import anyio

from mcp_specgen_runtime.app import App, Context

if TYPE_CHECKING:
    from collections.abc import Sequence

NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


def build(name: str, redis: str | None = None, prefix: str = "mcp:") -> App:
    """The instance's app (see the module docstring)."""
    # redis=None explicitly: a memory instance ignores $MCP_REDIS_URL.
    app = App("cluster-test", version="1.0", redis=redis, redis_prefix=prefix)

    @app.tool()
    def echo(message: str) -> str:
        """The message back."""
        return message

    @app.tool()
    async def chatty(
        ctx: Context, tag: str = "", steps: int = 3, delay_ms: int = 0
    ) -> str:
        """Progress and a log line (`<tag> <step>`) per step, then the result."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"{tag} {step}")
            await ctx.info(f"{tag} {step}")
            if delay_ms:
                await anyio.sleep(delay_ms / 1000)
        return f"{tag} done {steps}"

    @app.tool()
    async def ask(ctx: Context, question: str) -> str:
        """Ask the client for a name."""
        answer = await ctx.elicit(question, NAME_SCHEMA)
        if answer.get("action") != "accept":
            return f"no answer ({answer.get('action')})"
        return f"hello {answer.get('content', {}).get('name')}"

    @app.tool(task_support="optional")
    async def slow(seconds: float) -> str:
        """Sleep, then say so; a task when the client asks for one."""
        await anyio.sleep(seconds)
        return f"slept {seconds:g}"

    @app.tool()
    def whoami() -> str:
        """This instance's name."""
        return name

    return app


def main(argv: Sequence[str] | None = None) -> None:
    """Serve one instance until SIGTERM or SIGINT."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cluster_server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--name", default="instance")
    parser.add_argument("--redis", default=None, metavar="URL")
    parser.add_argument("--prefix", default="mcp:")
    args = parser.parse_args(argv)
    app = build(args.name, args.redis, args.prefix)
    print(f"ready {args.port}", flush=True)
    app.run("http", port=args.port)


if __name__ == "__main__":
    main()
