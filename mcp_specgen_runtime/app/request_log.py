"""`RequestLogger`: one log line per message served, with its duration and outcome.

    app = App("demo", middleware=[RequestLogger()])

logs, through the stdlib `logging` (logger `mcp_specgen_runtime.requests`,
level INFO), lines such as::

    tools/call echo id=3 2.1 ms ok
    tools/call broken id=4 0.9 ms tool error
    resources/read greeting://nope id=5 0.3 ms error -32002 Resource not found
    notifications/initialized 0.0 ms notification

A tool that fails answers a result with `isError: true`, not a JSON-RPC
error: the line says "tool error" so that failures do not pass for successes.
Over stdio, configure logging to write to stderr (its default): stdout
carries the protocol.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import anyio

from mcp_specgen_runtime.errors import RpcError

from .middleware import tool_failed

if TYPE_CHECKING:
    from collections.abc import Callable

    from .middleware import Call, CallNext

__all__ = ["RequestLogger"]


class RequestLogger:
    """Middleware logging one line per request or notification.

    Args:
        logger: the logger, or its name.
        level: the level of the lines of calls that succeeded; errors are
            logged at WARNING, failures of the server at ERROR.
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(
        self,
        logger: logging.Logger | str = "mcp_specgen_runtime.requests",
        *,
        level: int = logging.INFO,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        self.level = level
        self._clock = clock

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        started = self._clock()
        level, outcome = logging.ERROR, "failed"
        try:
            result = await call_next(call)
            level, outcome = self.level, "ok"
            if call.notification:
                outcome = "notification"
            elif call.method == "tools/call" and tool_failed(result):
                level, outcome = logging.WARNING, "tool error"
            return result
        except RpcError as exc:
            level, outcome = logging.WARNING, f"error {exc.code} {exc.message}"
            raise
        except anyio.get_cancelled_exc_class():
            level, outcome = self.level, "cancelled"
            raise
        except BaseException as exc:
            outcome = f"failed {type(exc).__name__}"
            raise
        finally:
            if self.logger.isEnabledFor(level):
                self.logger.log(level, "%s", _line(call, started, self._clock, outcome))


def _line(call: Call, started: float, clock: Callable[[], float], outcome: str) -> str:
    parts = [call.method]
    target = call.target
    if target is not None:
        parts.append(target)
    if call.request_id is not None:
        parts.append(f"id={call.request_id}")
    parts.append(f"{(clock() - started) * 1000:.1f} ms")
    parts.append(outcome)
    return " ".join(parts)
