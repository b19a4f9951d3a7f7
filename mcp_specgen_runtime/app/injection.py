"""Dependency injection into tools, prompts and resources.

A parameter is injected, never a client's argument, when it is annotated:

- `Context` (or `Context[State]`): the request's context;
- `Annotated[State, Lifespan]`: the value of the app's lifespan;
- `HttpInfo | None` (or `HttpInfo`, which refuses a call not made over
  HTTP): the HTTP request that carried the call (`http_info.py`);
- `Annotated[T, Depends(func)]`: what `func` gives for the call. `func`
  may be a plain function, a coroutine function, or a generator (sync or
  async) yielding once: the code after its `yield` runs after the call,
  and sees the call's exception if it failed (a cancelled call's cleanup
  still runs, shielded for up to `CLEANUP_TIMEOUT_S`). Its own parameters
  are injected the same way (it may take `ctx`, the lifespan, other
  dependencies); a parameter none of these fill must have a default. In one
  call each dependency runs once, however many ask for it (`cache=False`
  for a fresh value each time).

Injected parameters stay out of the tool's `inputSchema`, of a prompt's
`arguments`, and of validation: a client sending an argument of that name
gets what any unknown argument gets. The plan is read from the signature
once, at registration (`plan`); a function without injected parameters
has none, and its calls cost nothing more.

Plain dependency functions and generators run on the event loop (they
should be quick); one that blocks should be a coroutine function.
"""

from __future__ import annotations

import inspect
import typing
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from functools import partial
from types import NoneType, UnionType
from typing import TYPE_CHECKING, Annotated, Any, Union

import anyio

from .calls import call
from .context import Context
from .http_info import HttpInfo, current_http

if TYPE_CHECKING:
    from collections.abc import Callable

    from .lifespan import LifespanRunner

__all__ = ["CLEANUP_TIMEOUT_S", "Depends", "Injection", "Lifespan", "plan"]

CLEANUP_TIMEOUT_S = 10.0
"""Seconds the code after a generator dependency's `yield` may take once
its call is cancelled: it runs shielded from the cancellation, not forever."""


class Lifespan:
    """Marks a parameter as the app's lifespan value:
    `state: Annotated[State, Lifespan]`."""


class Depends:
    """Marks a parameter as a dependency's value:
    `db: Annotated[Db, Depends(get_db)]` (see the module docstring)."""

    __slots__ = ("cache", "dependency")

    def __init__(self, dependency: Callable[..., Any], *, cache: bool = True) -> None:
        if not callable(dependency):
            raise TypeError(f"Depends needs a callable: {dependency!r}")
        self.dependency = dependency
        self.cache = cache

    def __repr__(self) -> str:
        name = getattr(self.dependency, "__name__", repr(self.dependency))
        return f"Depends({name})"


_CONTEXT = "context"
_LIFESPAN = "lifespan"
_HTTP = "http"
_HTTP_OR_NONE = "http?"
_DEPENDENCY = "dependency"


@dataclass(frozen=True, slots=True)
class _Source:
    """Where one injected value comes from."""

    kind: str
    dependency: _Dependency | None = None


@dataclass(frozen=True, slots=True)
class _Dependency:
    """A `Depends` function with the plan of its own parameters."""

    func: Callable[..., Any]
    params: tuple[tuple[str, _Source], ...]
    shape: str
    """"plain", "async", "generator" or "async generator"."""
    cache: bool


@dataclass(frozen=True, slots=True)
class Injection:
    """The injected parameters of one function, planned at registration."""

    params: tuple[tuple[str, _Source], ...]
    cleans_up: bool
    """Whether a generator dependency runs code after the call."""
    simple: bool
    """Whether there are no dependencies: `fill` is all it takes."""

    def fill(self, arguments: dict[str, Any], lifespan: LifespanRunner) -> None:
        """Add the injected values of a `simple` plan to `arguments`."""
        resolver = _Resolver(lifespan, None)
        for name, source in self.params:
            arguments[name] = resolver.given(source.kind)

    async def invoke(
        self,
        func: Callable[..., Any],
        arguments: dict[str, Any],
        limiter: anyio.CapacityLimiter | None,
        lifespan: LifespanRunner,
    ) -> Any:
        """`func(**arguments, **injected)`, as `calls.call` runs it; a
        generator dependency's code after its `yield` runs after it."""
        if not self.cleans_up:
            resolver = _Resolver(lifespan, None)
            arguments.update(await resolver.values(self.params))
            return await call(partial(func, **arguments), limiter)
        stack = AsyncExitStack()
        try:
            resolver = _Resolver(lifespan, stack)
            arguments.update(await resolver.values(self.params))
            result = await call(partial(func, **arguments), limiter)
        except BaseException as exc:
            # Shielded: a cancelled call's cleanup (a pool's release) awaits.
            with anyio.move_on_after(CLEANUP_TIMEOUT_S, shield=True):
                if await stack.__aexit__(type(exc), exc, exc.__traceback__):
                    return None
            raise
        with anyio.move_on_after(CLEANUP_TIMEOUT_S, shield=True):
            await stack.aclose()
        return result


class _Resolver:
    """Resolves the injected values of one call."""

    __slots__ = ("_cache", "_context", "_lifespan", "_stack")

    def __init__(self, lifespan: LifespanRunner, stack: AsyncExitStack | None):
        self._lifespan = lifespan
        self._stack = stack
        self._context: Context[Any] | None = None
        self._cache: dict[Callable[..., Any], Any] = {}

    async def values(self, params: tuple[tuple[str, _Source], ...]) -> dict[str, Any]:
        return {name: await self.value(source) for name, source in params}

    def given(self, kind: str) -> Any:
        """The value of a source that is not a dependency."""
        if kind == _CONTEXT:
            if self._context is None:
                self._context = Context(self._lifespan)
            return self._context
        if kind == _LIFESPAN:
            return self._lifespan.value
        http = current_http()
        if http is None and kind == _HTTP:
            raise RuntimeError(
                "this call did not come over HTTP, and a parameter "
                "annotated HttpInfo needs it (annotate it HttpInfo | None "
                "to accept calls over stdio)"
            )
        return http

    async def value(self, source: _Source) -> Any:
        dependency = source.dependency
        if dependency is None:
            return self.given(source.kind)
        func = dependency.func
        if dependency.cache and func in self._cache:
            return self._cache[func]
        value = await self._run(dependency)
        if dependency.cache:
            self._cache[func] = value
        return value

    async def _run(self, dependency: _Dependency) -> Any:
        kwargs = await self.values(dependency.params)
        shape = dependency.shape
        if shape == "plain":
            return dependency.func(**kwargs)
        if shape == "async":
            return await dependency.func(**kwargs)
        assert self._stack is not None  # `cleans_up` made one
        if shape == "async generator":
            manager = asynccontextmanager(dependency.func)(**kwargs)
            return await self._stack.enter_async_context(manager)
        return self._stack.enter_context(contextmanager(dependency.func)(**kwargs))


def plan(
    func: Callable[..., Any], hints: dict[str, Any], what: str
) -> tuple[Injection | None, list[inspect.Parameter]]:
    """The injection plan of `func` (None when nothing is injected) and its
    other parameters, the client's arguments. `hints` are its type hints
    (`include_extras=True`); `what` names it in errors.

    Raises:
        TypeError: a dependency with a parameter nothing fills, or a
            dependency that depends on itself.
    """
    injected: list[tuple[str, _Source]] = []
    others: list[inspect.Parameter] = []
    for param in inspect.signature(func).parameters.values():
        source = _source(hints.get(param.name), what, ())
        if source is None:
            others.append(param)
        else:
            injected.append((param.name, source))
    if not injected:
        return None, others
    params = tuple(injected)
    simple = all(source.dependency is None for _, source in params)
    return Injection(params, _cleans_up(params), simple), others


def _source(
    annotation: Any, what: str, chain: tuple[Callable[..., Any], ...]
) -> _Source | None:
    """Where a parameter annotated `annotation` gets its value; None for a
    client's argument."""
    if annotation is None:
        return None
    if annotation is Context or typing.get_origin(annotation) is Context:
        return _Source(_CONTEXT)
    if annotation is HttpInfo:
        return _Source(_HTTP)
    if _is_optional_http(annotation):
        return _Source(_HTTP_OR_NONE)
    if typing.get_origin(annotation) is Annotated:
        for marker in annotation.__metadata__:
            if marker is Lifespan or isinstance(marker, Lifespan):
                return _Source(_LIFESPAN)
            if isinstance(marker, Depends):
                return _Source(_DEPENDENCY, _dependency(marker, what, chain))
    return None


def _is_optional_http(annotation: Any) -> bool:
    if typing.get_origin(annotation) not in (Union, UnionType):
        return False
    return set(typing.get_args(annotation)) == {HttpInfo, NoneType}


def _dependency(
    marker: Depends, what: str, chain: tuple[Callable[..., Any], ...]
) -> _Dependency:
    func = marker.dependency
    name = getattr(func, "__name__", repr(func))
    if func in chain:
        raise TypeError(f"{what}: dependency {name} depends on itself")
    hints = typing.get_type_hints(_annotated(func), include_extras=True)
    params: list[tuple[str, _Source]] = []
    for param in inspect.signature(func).parameters.values():
        source = _source(hints.get(param.name), what, (*chain, func))
        if source is not None:
            params.append((param.name, source))
        elif param.default is inspect.Parameter.empty and param.kind not in (
            param.VAR_POSITIONAL,
            param.VAR_KEYWORD,
        ):
            raise TypeError(
                f"{what}: parameter {param.name!r} of dependency {name} is "
                "neither injected (Context, HttpInfo, Annotated[..., Lifespan], "
                "Annotated[..., Depends(...)]) nor given a default"
            )
    return _Dependency(func, tuple(params), _shape(func), marker.cache)


def _annotated(func: Callable[..., Any]) -> Any:
    """What holds the annotations of `func`'s parameters: a class's
    `__init__`, a callable object's `__call__`, else itself."""
    if inspect.isclass(func):
        return func.__init__
    if inspect.isroutine(func):
        return func
    return type(func).__call__


def _shape(func: Callable[..., Any]) -> str:
    if inspect.isasyncgenfunction(func):
        return "async generator"
    if inspect.isgeneratorfunction(func):
        return "generator"
    dunder = type(func).__call__  # an object whose __call__ is a coroutine
    if inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(dunder):
        return "async"
    return "plain"


def _cleans_up(params: tuple[tuple[str, _Source], ...]) -> bool:
    for _, source in params:
        dependency = source.dependency
        if dependency is None:
            continue
        if dependency.shape.endswith("generator") or _cleans_up(dependency.params):
            return True
    return False
