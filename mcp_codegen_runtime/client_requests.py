"""Server→client requests with one call for both protocol eras.

A handler that needs the client (an LLM sample, user input, the roots) calls::

    result = await request_client("elicitation/create", params, ElicitResult)

and gets the client's answer, whatever the era of the request it serves:

- legacy revisions (initialize handshake): a JSON-RPC request to the client over
  the same connection, awaited;
- 2026-07-28 and later: the handler cannot wait for the client within one
  request, so the first call raises `InputRequired`; the session answers the
  request with `InputRequiredResult` (the request under key `r<n>`, and a sealed
  `requestState` holding the answers so far). The client retries the request
  with `inputResponses`; the handler runs again from the start and this time
  `request_client` returns the answer. A handler that asks twice takes two
  rounds, and so on, so handlers must not act on the world before their last
  question (or must do so idempotently).

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

from .conversion import fit
from .errors import CapabilityError, InvalidParamsError, ProtocolError
from .wire import decode, to_builtins

if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import ModuleType

    from .jsonrpc import Peer
    from .request_state import RequestStateSealer
    from .spec import MethodSpec

__all__ = [
    "LOG_LEVELS",
    "ClientExchange",
    "InputRequired",
    "log_to_client",
    "request_client",
]

T = TypeVar("T")

INPUT_KEY_PREFIX = "r"

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

    def __init__(self, key: str, method: str, params: Any, answers: list[Any]) -> None:
        super().__init__(f"input required: {method}")
        self.key = key
        self.method = method
        self.params = params
        self.answers = answers


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
    answers: list[Any] = field(default_factory=list[Any])
    """Modern era: the client's answers so far, in the order they were asked."""
    asked: int = 0
    log_level: str | None = None
    """The least severe level the client wants (legacy: `logging/setLevel`;
    modern: the request's `io.modelcontextprotocol/logLevel`)."""

    @property
    def modern(self) -> bool:
        """Whether requests go through `InputRequiredResult` rounds."""
        return self.connection is None


_exchange: contextvars.ContextVar[ClientExchange] = contextvars.ContextVar(
    "mcp_codegen_runtime.client_requests.exchange"
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


async def request_client(method: str, params: Any, result_type: type[T]) -> T:
    """Send a server→client request and return the client's result.

    `params` is a params struct of any generated revision (or builtins), and
    `result_type` the result type of that revision.

    Raises:
        CapabilityError: the client did not declare the capability it needs.
        InputRequired: (modern era) not answered yet; let it propagate.
        RpcError: the client answered with an error (legacy era).
        ProtocolError: the client's answer does not fit the result type.
    """
    exchange = current_exchange()
    spec = _spec(exchange.package, method)
    capability = method.split("/", 1)[0]
    if capability not in exchange.client_capabilities:
        raise CapabilityError(method, capability, "client")
    params = _fit(params, spec.params, f"{method} params") if spec.params else None
    if exchange.connection is not None:
        answer = await exchange.connection.request(method, params, spec.result)
    else:
        index = exchange.asked
        exchange.asked += 1
        if index >= len(exchange.answers):
            key = f"{INPUT_KEY_PREFIX}{index}"
            raise InputRequired(key, method, params, exchange.answers)
        try:
            answer = decode(msgspec.json.encode(exchange.answers[index]), spec.result)
        except msgspec.DecodeError as exc:
            raise InvalidParamsError(
                method, f"inputResponses answer to {method} does not fit: {exc}"
            ) from None
    if isinstance(answer, result_type):
        return answer
    return typing.cast("T", _fit(answer, result_type, f"{method} result"))


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
    from .jsonrpc import current_request

    await current_request().connection.notify("notifications/message", params)
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
    request: dict[str, Any] = {"method": signal.method}
    if signal.params is not None:
        request["params"] = to_builtins(signal.params)
    return {"resultType": "input_required", "inputRequests": {signal.key: request}}


def seal_answers(
    sealer: RequestStateSealer, signal: InputRequired, binding: bytes
) -> str:
    """The `requestState` of a round: the answers so far and the key pending."""
    return sealer.seal({"answers": signal.answers, "pending": signal.key}, binding)


def open_answers(
    sealer: RequestStateSealer,
    method: str,
    binding: bytes,
    request_state: str,
    input_responses: Mapping[str, Any] | None,
) -> list[Any]:
    """The client's answers to every round so far.

    Raises:
        InvalidParamsError: the state is not valid, or the answer to the
            pending question is missing.
    """
    state = sealer.open(request_state, binding, method)
    answers: list[Any] = list(state.get("answers", []))
    pending = state.get("pending")
    if pending is not None:
        if not input_responses or pending not in input_responses:
            raise InvalidParamsError(
                method, f"inputResponses must answer the input request {pending!r}"
            )
        answers.append(input_responses[pending])
    return answers
