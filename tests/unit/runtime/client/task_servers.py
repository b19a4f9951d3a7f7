"""Minimal task servers speaking raw JSON over the memory transport, one per
wire design, for the client's task tests:

- `legacy`: 2025-11-25 core tasks (task-augmented `tools/call`, `tasks/get`,
  blocking `tasks/result`, `tasks/list` in pages of two, `tasks/cancel`,
  `notifications/tasks/status`; input asked with `elicitation/create` and
  `sampling/createMessage` sent to the client while the task runs);
- `modern`: the 2026-07-28 tasks extension as SEP-2663 and the conformance
  scenarios show it (flat `resultType: "task"`, `tasks/get` with the result,
  error or `inputRequests` inline, `tasks/update`, a bare `tasks/cancel`
  acknowledgment, every tasks method gated on the extension, -32021 without
  it, no `tasks/list`).

Tools: `slow` (ends when the test sets `release`), `steps` (2025: two
progress notifications with the call's token, then as `slow`), `quick` (2026: answered
at once), `fail` (a JSON-RPC error), `tool_error` (an `isError` result),
`ask` (an elicitation, then "you said <name>"), `sample` (a sampling, then
the sampled text), `plain` (2025: no `execution`, so no tasks).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import TaskGroup

from mcp_specgen_runtime.errors import InvalidParamsError, MethodNotFoundError, RpcError
from mcp_specgen_runtime.jsonrpc.connection import Connection, Peer, current_request
from mcp_specgen_runtime.transports import memory_pair
from mcp_specgen_runtime.transports.memory import MemoryTransport

EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
CAPS = "io.modelcontextprotocol/clientCapabilities"
STAMP = "2026-11-26T10:00:00Z"
FAILURE = {"code": -32050, "message": "the job broke", "data": {"why": "test"}}
ELICIT = {
    "message": "Your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}
SAMPLE = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    "maxTokens": 5,
}
TOOLS_2025 = [
    {
        "name": "steps",
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "optional"},
    },
    {
        "name": "slow",
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "optional"},
    },
    {
        "name": "fail",
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "optional"},
    },
    {
        "name": "tool_error",
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "optional"},
    },
    {
        "name": "ask",
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "required"},
    },
    {
        "name": "sample",
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "required"},
    },
    {
        "name": "forbidden",
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "forbidden"},
    },
    {"name": "plain", "inputSchema": {"type": "object"}},
]
TERMINAL = ("completed", "failed", "cancelled")


def text(value: str, *, error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": value}]}
    if error:
        result["isError"] = True
    return result


class FakeTaskServer:
    """One of the two fakes (`era`: "legacy" or "modern").

    Attributes:
        seen: (method, params) of every message received.
        release: set it to let `slow` end.
        capabilities: what the server declares.
        poll_interval_ms: suggested to the client.
        notify: (legacy) send `notifications/tasks/status` on each change.
        overrides: method -> the answer to give instead (hostile answers).
    """

    def __init__(self, era: str, group: TaskGroup) -> None:
        self.era = era
        self.group = group
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.received = anyio.Event()
        self.release = anyio.Event()
        self.tasks: dict[str, dict[str, Any]] = {}
        self.ids = itertools.count(1)
        self.poll_interval_ms = 5
        self.notify = True
        self.overrides: dict[str, Any] = {}
        if era == "legacy":
            self.capabilities: dict[str, Any] = {
                "tools": {},
                "tasks": {
                    "list": {},
                    "cancel": {},
                    "requests": {"tools": {"call": {}}},
                },
            }
        else:
            self.capabilities = {"tools": {}, "extensions": {EXTENSION: {}}}

    def methods(self) -> list[str]:
        return [method for method, _ in self.seen]

    async def until(self, method: str, count: int) -> None:
        """Wait until `method` was received `count` times."""
        while self.methods().count(method) < count:
            await self.received.wait()

    # -- serving --

    async def handle(self, method: str, params: bytes | None) -> bytes | None:
        body: dict[str, Any] = json.loads(params or b"{}")
        self.seen.append((method, body))
        self.received.set()
        self.received = anyio.Event()
        if method.startswith("notifications/"):
            return None
        if method in self.overrides:
            return json.dumps(self.overrides[method]).encode()
        found = await (self._legacy if self.era == "legacy" else self._modern)(
            method, body
        )
        return json.dumps(found).encode()

    async def _legacy(self, method: str, body: dict[str, Any]) -> Any:
        if method == "server/discover":
            raise MethodNotFoundError(method)
        if method == "initialize":
            return {
                "protocolVersion": "2025-11-25",
                "capabilities": self.capabilities,
                "serverInfo": {"name": "fake-2025", "version": "1"},
            }
        if method == "tools/list":
            return {"tools": TOOLS_2025}
        if method == "tools/call":
            if "task" not in body:
                return text("no task")
            task = self._create(body, current_request().connection)
            return {"task": self._view(task)}
        if method == "tasks/list":
            ids = list(self.tasks)
            start = ids.index(body["cursor"]) + 1 if "cursor" in body else 0
            page: dict[str, Any] = {
                "tasks": [self._view(self.tasks[i]) for i in ids[start : start + 2]]
            }
            if start + 2 < len(ids):
                page["nextCursor"] = ids[start + 1]
            return page
        task = self._find(method, body)
        if method == "tasks/get":
            return self._view(task)
        if method == "tasks/result":
            await task["ended"].wait()
            if task["error"] is not None:
                error = task["error"]
                raise RpcError(error["code"], error["message"], error.get("data"))
            if task["result"] is None:
                raise RpcError(-32603, f"task {task['taskId']} was {task['status']}")
            meta = {RELATED: {"taskId": task["taskId"]}}
            return {**task["result"], "_meta": meta}
        if method == "tasks/cancel":
            if task["status"] in TERMINAL:
                raise InvalidParamsError(method, "the task already ended")
            task["scope"].cancel()
            await self._set(task, status="cancelled", statusMessage="cancelled")
            return self._view(task)
        raise MethodNotFoundError(method)

    async def _modern(self, method: str, body: dict[str, Any]) -> Any:
        if method == "server/discover":
            return {
                "supportedVersions": ["2026-07-28"],
                "capabilities": self.capabilities,
                "serverInfo": {"name": "fake-2026", "version": "1"},
                "cacheScope": "private",
                "ttlMs": 0,
                "resultType": "complete",
            }
        declared = EXTENSION in (
            body.get("_meta", {}).get(CAPS, {}).get("extensions", {})
        )
        if method == "tools/call":
            name = body["name"]
            if name == "quick" or not declared:
                return {**text(f"{name} at once"), "resultType": "complete"}
            task = self._create(body, None)
            return {**self._view(task), "resultType": "task"}
        if not method.startswith("tasks/") or method in ("tasks/list", "tasks/result"):
            raise MethodNotFoundError(method)
        if not declared:
            raise RpcError(
                -32021,
                "Missing required client capability",
                {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
            )
        task = self._find(method, body)
        if method == "tasks/get":
            return {**self._view(task), "resultType": "complete"}
        if method == "tasks/update":
            for key, answer in body["inputResponses"].items():
                if key in task["pending"]:
                    task["answers"][key] = answer
                    task["pending"].pop(key)
            if not task["pending"]:
                task["answered"].set()
            return {"resultType": "complete"}
        if method == "tasks/cancel":
            if task["status"] not in TERMINAL:
                task["scope"].cancel()
                await self._set(task, status="cancelled")
            return {"resultType": "complete"}
        raise MethodNotFoundError(method)

    # -- tasks --

    def _create(self, body: dict[str, Any], connection: Peer | None) -> dict[str, Any]:
        task_id = f"task-{next(self.ids)}"
        ttl = body.get("task", {}).get("ttl", 60_000)
        task: dict[str, Any] = {
            "taskId": task_id,
            "status": "working",
            "ttl": ttl,
            "result": None,
            "error": None,
            "pending": {},
            "answers": {},
            "answered": anyio.Event(),
            "ended": anyio.Event(),
            "scope": anyio.CancelScope(),
            "statusMessage": None,
            "progress": body.get("_meta", {}).get("progressToken"),
        }
        self.tasks[task_id] = task
        self.group.start_soon(self._work, task, body["name"], connection)
        return task

    def _find(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        task = self.tasks.get(body.get("taskId", ""))
        if task is None:
            raise InvalidParamsError(method, f"unknown task {body.get('taskId')!r}")
        return task

    def _view(self, task: dict[str, Any]) -> dict[str, Any]:
        view: dict[str, Any] = {
            "taskId": task["taskId"],
            "status": task["status"],
            "createdAt": STAMP,
            "lastUpdatedAt": STAMP,
        }
        if task["statusMessage"] is not None:
            view["statusMessage"] = task["statusMessage"]
        if self.era == "legacy":
            view["ttl"] = task["ttl"]
            view["pollInterval"] = self.poll_interval_ms
            return view
        view["ttlMs"] = task["ttl"]
        view["pollIntervalMs"] = self.poll_interval_ms
        if task["status"] == "completed":
            view["result"] = task["result"]
        elif task["status"] == "failed":
            view["error"] = task["error"]
        elif task["status"] == "input_required":
            view["inputRequests"] = dict(task["pending"])
        return view

    async def _set(self, task: dict[str, Any], **changes: Any) -> None:
        if task["status"] in TERMINAL:
            return
        task.update(changes)
        if task["status"] in TERMINAL:
            task["ended"].set()
        connection = task.get("connection")
        if self.era == "legacy" and self.notify and connection is not None:
            await connection.notify("notifications/tasks/status", self._view(task))

    async def _ask(
        self, task: dict[str, Any], method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        await self._set(task, status="input_required")
        if self.era == "legacy":
            meta = {RELATED: {"taskId": task["taskId"]}}
            answer: dict[str, Any] = await task["connection"].request(
                method, {**params, "_meta": meta}, dict[str, Any]
            )
        else:
            key = f"q{len(task['answers']) + len(task['pending']) + 1}"
            task["answered"] = anyio.Event()
            task["pending"][key] = {"method": method, "params": params}
            await task["answered"].wait()
            answer = task["answers"][key]
        await self._set(task, status="working")
        return answer

    async def _work(
        self, task: dict[str, Any], name: str, connection: Peer | None
    ) -> None:
        task["connection"] = connection
        with task["scope"]:
            if name == "steps" and connection is not None:
                for step in (1, 2):
                    await connection.notify(
                        "notifications/progress",
                        {
                            "progressToken": task["progress"],
                            "progress": step,
                            "total": 2,
                        },
                    )
                await self.release.wait()
                await self._set(task, status="completed", result=text("stepped"))
            if name == "slow":
                await self.release.wait()
                await self._set(task, status="completed", result=text("done"))
            elif name == "fail":
                await self._set(task, status="failed", error=FAILURE)
            elif name == "tool_error":
                # 2025: an isError result fails the task; 2026: it completes.
                status = "failed" if self.era == "legacy" else "completed"
                await self._set(task, status=status, result=text("bad", error=True))
            elif name == "ask":
                answer = await self._ask(task, "elicitation/create", ELICIT)
                said = answer.get("content", {}).get("name")
                await self._set(
                    task, status="completed", result=text(f"you said {said}")
                )
            elif name == "sample":
                answer = await self._ask(task, "sampling/createMessage", SAMPLE)
                sampled = answer["content"]["text"]
                await self._set(task, status="completed", result=text(sampled))


@asynccontextmanager
async def fake_server(
    era: str,
) -> AsyncGenerator[tuple[FakeTaskServer, MemoryTransport]]:
    """A fake server of `era` and the client's end of its transport."""
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as group:
        server = FakeTaskServer(era, group)
        async with Connection(server_end, server.handle):
            yield server, client_end
        group.cancel_scope.cancel()
