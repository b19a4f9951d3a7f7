"""Server→client requests with one call for both protocol eras.

A handler that needs the client (an LLM sample, user input, the roots) calls::

    result = await request_client("elicitation/create", params, ElicitResult)

and gets the client's answer, whatever the era of the request it serves:

- legacy revisions (initialize handshake): a JSON-RPC request to the client over
  the same connection, awaited;
- 2026-07-28 and later: the handler cannot wait for the client within one
  request, so the first call raises `InputRequired`; the session answers the
  request with `InputRequiredResult` (the request under its key in
  `inputRequests`, and a sealed `requestState` holding the answers so far).
  The client retries the request with `inputResponses`; the handler runs again
  from the start and this time `request_client` returns the answer. A handler
  that asks twice takes two rounds, and so on, so handlers must not act on the
  world before their last question (or must do so idempotently).

The key of a question is `key=` when given (say `"user_name"`), else `r<n>` for
the n-th question the handler asks. `request_client_many` asks several
questions in one round (legacy: one request each, concurrently). A handler may
keep a little JSON of its own across rounds with `handler_state()` /
`set_handler_state()`; it travels sealed in `requestState` with the answers.

Both eras check the client declared the capability the request needs
(`sampling`, `elicitation`, `roots`), and convert the params and the answer
between the handler's revision and the negotiated one.
"""

from __future__ import annotations

import contextvars
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from mcp_specgen_runtime.codec.conversion import fit
from mcp_specgen_runtime.codec.wire import decode, to_builtins
from mcp_specgen_runtime.errors import (
    CapabilityError,
    ErrorCode,
    InvalidParamsError,
    ProtocolError,
    RequestTimeoutError,
    RpcError,
)

if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import ModuleType

    from mcp_specgen_runtime.codec.spec import MethodSpec
    from mcp_specgen_runtime.jsonrpc.connection import Peer

    from .request_state import RequestStateSealer
    from .tasks.running import RunningTask

__all__ = [
    "LOG_LEVELS",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "ClientExchange",
    "InputRequired",
    "check_answers",
    "client_capabilities",
    "handler_state",
    "log_to_client",
    "request_client",
    "request_client_many",
    "require_client_capabilities",
    "set_handler_state",
]

T = TypeVar("T")

INPUT_KEY_PREFIX = "r"

TASK_QUESTION_TIMEOUT_S = 900.0
"""How long a legacy task waits for the client to answer one of its requests
(elicitation, sampling...) before it fails: a client that never answers must
not hold the task, and its active slot, until the TTL."""

MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
"""2026-07-28 `MissingRequiredClientCapability` (the HTTP server answers 400)."""

LOG_LEVELS = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""The syslog severities of `notifications/message`, least severe first."""


class InputRequired(BaseException):
    """Raised by `request_client` in the modern era when the client's answer is
    not in hand yet; the session turns it into `InputRequiredResult`.

    A `BaseException`, like task cancellation, so that a handler's
    `except Exception` does not swallow it.
    """

    def __init__(
        self,
        requests: Mapping[str, tuple[str, Any]],
        answers: Mapping[str, Any],
        state: Any = None,
    ) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = dict(requests)
        """Key -> (method, params) of each question still unanswered."""
        self.answers = dict(answers)
        """The answers in hand, by key."""
        self.state = state
        """The handler's own state (`set_handler_state`), or None."""

    @property
    def key(self) -> str:
        """The key of the first question pending."""
        return next(iter(self.requests))


def _no_answers() -> dict[str, Any]:
    # Not `dict[str, Any]` itself: calling the alias costs six times as much,
    # on every modern request.
    return {}


@dataclass
class ClientExchange:
    """What `request_client` needs to know about the request being served.

    Set by the server session around each handler call.
    """

    package: ModuleType
    """The negotiated revision's generated package."""
    client_capabilities: Mapping[str, Any]
    """The client's capabilities, as builtins (per connection or per request)."""
    connection: Peer | None = None
    """Legacy era: the connection to send requests over."""
    answers: dict[str, Any] = field(default_factory=_no_answers)
    """Modern era: the client's answers so far, by input request key."""
    asked: int = 0
    """How many questions the handler asked so far (for the `r<n>` keys)."""
    state: Any = None
    """Modern era: the handler's own state, sealed in `requestState`."""
    log_level: str | None = None
    """The least severe level the client wants (legacy: `logging/setLevel`;
    modern: the request's `io.modelcontextprotocol/logLevel`)."""
    task: RunningTask | None = None
    """Inside a task's work: its handle. Legacy requests to the client then
    carry the related-task `_meta` and the task is `input_required` while
    they wait; in the modern era the questions are parked on the task (no
    `InputRequired` round) until `TaskManager.answer` delivers the answers."""
    unreachable: str | None = None
    """Why no request can reach the client at all (a stateless HTTP server
    keeps no connection to send it on); `request_client` then raises
    `ProtocolError` saying so."""

    @property
    def modern(self) -> bool:
        """Whether requests go through `InputRequiredResult` rounds."""
        return self.connection is None and self.unreachable is None


_exchange: contextvars.ContextVar[ClientExchange] = contextvars.ContextVar(
    "mcp_specgen_runtime.protocol.client_requests.exchange"
)


def current_exchange() -> ClientExchange:
    """The exchange of the request being served.

    Raises:
        RuntimeError: not inside a request served by a `ServerSession`.
    """
    try:
        return _exchange.get()
    except LookupError:
        raise RuntimeError("not inside a request served by a ServerSession") from None


def set_exchange(exchange: ClientExchange) -> contextvars.Token[ClientExchange]:
    """Make `exchange` current (the session does this per request)."""
    return _exchange.set(exchange)


def reset_exchange(token: contextvars.Token[ClientExchange]) -> None:
    """Undo `set_exchange`."""
    _exchange.reset(token)


async def request_client(
    method: str, params: Any, result_type: type[T], *, key: str | None = None
) -> T:
    """Send a server→client request and return the client's result.

    `params` is a params struct of any generated revision (or builtins), and
    `result_type` the result type of that revision. `key` names the question
    in a 2026 `inputRequests` (default `r<n>`, n counting the questions).

    Raises:
        CapabilityError: the client did not declare the capability it needs.
        ProtocolError: no request can reach the client (`unreachable`).
        InputRequired: (modern era) not answered yet; let it propagate.
        RpcError: the client answered with an error (legacy era).
        ProtocolError: the client's answer does not fit the result type.
    """
    answers = await request_client_many({key: (method, params, result_type)})
    return typing.cast("T", next(iter(answers.values())))


async def request_client_many(
    questions: Mapping[str | None, tuple[str, Any, type[Any]]],
) -> dict[str, Any]:
    """Ask several questions at once: key -> (method, params, result type).

    A None key gets `r<n>`. Legacy era: one request each, concurrently.
    Modern era: every unanswered question goes in one `InputRequiredResult`.
    Returns key -> the client's result (of that question's result type).

    Raises:
        as `request_client`.
    """
    exchange = current_exchange()
    if exchange.unreachable is not None:
        names = ", ".join(method for method, _, _ in questions.values())
        raise ProtocolError(f"{names}: {exchange.unreachable}")
    prepared: dict[str, tuple[str, Any, MethodSpec]] = {}
    for key, (method, params, _) in questions.items():
        spec = _spec(exchange.package, method)
        capability = method.split("/", 1)[0]
        if capability not in exchange.client_capabilities:
            raise CapabilityError(method, capability, "client")
        name = key if key is not None else f"{INPUT_KEY_PREFIX}{exchange.asked}"
        exchange.asked += 1
        fitted = _fit(params, spec.params, f"{method} params") if spec.params else None
        prepared[name] = (method, fitted, spec)
    task = exchange.task
    if exchange.connection is not None and task is not None:
        related = task.related_meta
        tagged = {
            name: (method, _with_meta(params, related), spec)
            for name, (method, params, spec) in prepared.items()
        }
        async with task.awaiting_input():
            raw = await _send_all(
                exchange.connection, tagged, timeout=TASK_QUESTION_TIMEOUT_S
            )
    elif exchange.connection is not None:
        raw = await _send_all(exchange.connection, prepared)
    elif task is not None:
        raw = await _parked(exchange, task, prepared)
    else:
        raw = _answered(exchange, prepared)
    result_types = [entry[2] for entry in questions.values()]
    return {
        name: _typed(answer, result_type, prepared[name][0])
        for (name, answer), result_type in zip(raw.items(), result_types, strict=True)
    }


async def _send_all(
    connection: Peer,
    prepared: Mapping[str, tuple[str, Any, MethodSpec]],
    *,
    timeout: float | None = None,  # noqa: ASYNC109 - named in the error
) -> dict[str, Any]:
    """Legacy era: each question as a request over the connection.

    Raises:
        RpcError: (-32603) no answer within `timeout` seconds.
    """

    async def one(method: str, params: Any, spec: MethodSpec) -> Any:
        try:
            return await connection.request(
                method, params, spec.result, timeout=timeout
            )
        except RequestTimeoutError:
            raise RpcError(
                ErrorCode.INTERNAL_ERROR,
                f"{method}: the client did not answer within {timeout:g} s",
            ) from None

    if len(prepared) == 1:
        name, (method, params, spec) = next(iter(prepared.items()))
        return {name: await one(method, params, spec)}
    import anyio

    answers: dict[str, Any] = {}

    async def ask(name: str, method: str, params: Any, spec: MethodSpec) -> None:
        answers[name] = await one(method, params, spec)

    async with anyio.create_task_group() as tasks:
        for name, (method, params, spec) in prepared.items():
            tasks.start_soon(ask, name, method, params, spec)
    return {name: answers[name] for name in prepared}


def _with_meta(params: Any, meta: Mapping[str, Any]) -> dict[str, Any]:
    """`params` as builtins with `meta` added to its `_meta`."""
    found: Any = to_builtins(params) if params is not None else {}
    body = typing.cast("dict[str, Any]", found)
    body["_meta"] = {**(body.get("_meta") or {}), **meta}
    return body


async def _parked(
    exchange: ClientExchange,
    task: RunningTask,
    prepared: Mapping[str, tuple[str, Any, MethodSpec]],
) -> dict[str, Any]:
    """Modern era inside a task: the unanswered questions wait on the task's
    record until `TaskManager.answer` delivers them."""
    missing = {
        name: (method, None if params is None else to_builtins(params))
        for name, (method, params, _) in prepared.items()
        if name not in exchange.answers
    }
    if missing:
        exchange.answers.update(await task.ask(missing))
    return _answered(exchange, prepared)


def _answered(
    exchange: ClientExchange, prepared: Mapping[str, tuple[str, Any, MethodSpec]]
) -> dict[str, Any]:
    """Modern era: the answers in hand, or `InputRequired` for the rest."""
    missing = {
        name: (method, params)
        for name, (method, params, _) in prepared.items()
        if name not in exchange.answers
    }
    if missing:
        raise InputRequired(missing, exchange.answers, _state_of(exchange))
    return {
        name: _answer(method, name, method, spec, exchange.answers[name])
        for name, (method, _, spec) in prepared.items()
    }


def _answer(label: str, key: str, method: str, spec: MethodSpec, answer: Any) -> Any:
    """`answer` decoded as the result of the question `method`.

    Raises:
        InvalidParamsError: (for `label`) it does not fit.
    """
    try:
        return decode(msgspec.json.encode(answer), spec.result)
    except msgspec.DecodeError as exc:
        raise InvalidParamsError(
            label, f"inputResponses[{key!r}] does not fit {method}: {exc}"
        ) from None


def check_answers(
    package: ModuleType,
    label: str,
    questions: Mapping[str, Any] | None,
    responses: Mapping[str, Any],
) -> None:
    """Refuse an answer that does not fit the question (`{"method", ...}`)
    it answers; keys not asked are ignored.

    Raises:
        InvalidParamsError: (for `label`) naming the key and what is wrong.
    """
    for key, answer in responses.items():
        question: Any = (questions or {}).get(key)
        asked: Any = None
        if isinstance(question, dict):
            asked = typing.cast("dict[str, Any]", question).get("method")
        if not isinstance(asked, str):
            continue
        spec: MethodSpec | None = package.METHODS.get(asked)
        if spec is not None and spec.result is not None:
            _answer(label, key, asked, spec, answer)


def _typed(answer: Any, result_type: type[T], method: str) -> T:
    if isinstance(answer, result_type):
        return answer
    return typing.cast("T", _fit(answer, result_type, f"{method} result"))


def client_capabilities() -> Mapping[str, Any]:
    """The capabilities the client of the request being served declared."""
    return current_exchange().client_capabilities


def require_client_capabilities(*names: str) -> None:
    """Refuse the request unless the client declared every capability named.

    Raises:
        RpcError: -32021 (MissingRequiredClientCapability), its data
            `{"requiredCapabilities": {name: {}, ...}}` naming the missing ones.
    """
    declared = current_exchange().client_capabilities
    missing = [name for name in names if name not in declared]
    if missing:
        raise RpcError(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            f"Missing required client capabilities: {', '.join(missing)}",
            {"requiredCapabilities": {name: {} for name in missing}},
        )


def handler_state() -> Any:
    """The handler's own state from the previous round (None at first)."""
    return _state_of(current_exchange())


def _state_of(exchange: ClientExchange) -> Any:
    if exchange.state is not None:
        return exchange.state
    return getattr(exchange.answers, "state", None)


def set_handler_state(state: Any) -> None:
    """Keep `state` (small JSON) for the next round; it is sealed in
    `requestState`, so the client can neither read nor alter it."""
    current_exchange().state = state


async def log_to_client(level: str, data: Any, logger: str | None = None) -> bool:
    """Send `notifications/message` if the client wants messages of `level`.

    Legacy clients get every message until they set a level; modern clients
    only get messages when the request named a level (they opt in per
    request). Returns whether the message was sent.

    Raises:
        ValueError: `level` is not one of `LOG_LEVELS`.
    """
    if level not in LOG_LEVELS:
        raise ValueError(f"unknown log level {level!r}; use one of {LOG_LEVELS}")
    exchange = current_exchange()
    threshold = exchange.log_level
    if threshold is None and exchange.modern:
        return False
    if threshold in LOG_LEVELS and LOG_LEVELS.index(level) < LOG_LEVELS.index(
        threshold
    ):
        return False
    params: dict[str, Any] = {"level": level, "data": data}
    if logger is not None:
        params["logger"] = logger
    from mcp_specgen_runtime.jsonrpc.connection import current_request

    await current_request().notify("notifications/message", params)
    return True


def _spec(package: ModuleType, method: str) -> MethodSpec:
    spec: MethodSpec | None = package.METHODS.get(method)
    if spec is None or spec.kind != "request" or spec.direction == "client_to_server":
        raise ProtocolError(
            f"{method} is not a server→client request of {package.PROTOCOL_VERSION}"
        )
    return spec


def _fit(value: Any, target_type: Any, label: str) -> Any:
    if isinstance(target_type, type) and isinstance(value, target_type):
        return value
    return fit(value, target_type, label=label).value


def input_required_result(signal: InputRequired) -> dict[str, Any]:
    """The builtins of an `InputRequiredResult` for `signal`, less its state."""
    requests: dict[str, Any] = {}
    for key, (method, params) in signal.requests.items():
        request: dict[str, Any] = {"method": method}
        if params is not None:
            request["params"] = to_builtins(params)
        requests[key] = request
    return {"resultType": "input_required", "inputRequests": requests}


def seal_answers(
    sealer: RequestStateSealer,
    signal: InputRequired,
    binding: bytes,
    *,
    principal: object,
) -> str:
    """The `requestState` of a round: the answers so far, the keys pending and
    the handler's own state, for the caller `principal` only."""
    payload: dict[str, Any] = {
        "answers": signal.answers,
        "pending": list(signal.requests),
    }
    if signal.state is not None:
        payload["state"] = signal.state
    return sealer.seal(payload, binding, principal)


class OpenedState(dict[str, Any]):
    """The answers of an opened `requestState` (a dict by key), with the
    handler's own state as `state`."""

    state: Any = None


def open_answers(
    sealer: RequestStateSealer,
    method: str,
    binding: bytes,
    request_state: str,
    input_responses: Any,
    *,
    principal: object,
) -> dict[str, Any]:
    """The client's answers to every round so far, by key (an `OpenedState`).

    Answers to keys that were not asked are ignored.

    Raises:
        InvalidParamsError: the state is not valid (or was issued to another
            caller than `principal`), or the answer to a pending question is
            missing.
    """
    state = sealer.open(request_state, binding, method, principal)
    opened = OpenedState(state.get("answers") or {})
    opened.state = state.get("state")
    pending: list[str] = list(state.get("pending") or [])
    if input_responses is not None and not isinstance(input_responses, dict):
        raise InvalidParamsError(
            method, "inputResponses must be an object of answers by key"
        )
    for key in pending:
        if not input_responses or key not in input_responses:
            raise InvalidParamsError(
                method, f"inputResponses must answer the input request {key!r}"
            )
        opened[key] = input_responses[key]
    return opened
