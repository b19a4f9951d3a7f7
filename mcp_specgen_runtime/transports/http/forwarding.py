"""Serving legacy sessions across a cluster's instances: `ClusterMember`,
the part of `McpHttpApp` that finds a session's home, forwards ops to it
and relays what it stores, serves the ops of this instance's inbox, rebuilds
a session from its recorded state, and hands sessions over when leaving. (The pieces
it sends and stores: `relay`.)

Several instances (`cluster=Cluster(...)`, all on one Redis; see
`cluster.py` for the keys): a legacy session lives on one instance, its home
(the one that answered its `initialize`); its record in Redis names its
owner (a digest of the principal binding) and home, and keeps the effect
of the messages that changed its state once they succeeded (its
`initialize`, `notifications/initialized`, the last `logging/setLevel`, the
subscribed URIs; `RedisSessions`). An instance
taking a request of a session it does not hold looks it up (404 as `legacy`
says for an unknown one or another principal's) and:

- home alive: forwards it through the home's inbox (a POST with what the
  `authenticate` hook reads of it: the home authenticates it again, so its
  handlers see the principal object, and refuses it as it would locally,
  404 when it names another principal than the session's) and relays what
  the home stores in the shared `RedisEventStore`: a POST's answer (JSON when
  its first message completes it, else SSE with the stored event ids), or
  the home's refusal as the same HTTP answer; 202 for notifications and
  responses (cancellations, answers to the server's requests, which resolve
  at the home); a GET opens the home's standalone stream (replacing the
  previous one); a DELETE waits for the home to end the session;
- no live home (dead, or released by a graceful shutdown): claims it
  (compare-and-set) and rebuilds it by feeding that state to a fresh
  connection (answers discarded; the connection's key, owner of its
  anonymous tasks, derives from the session id), then serves it.

A GET with `Last-Event-ID` of a stream no local task is storing replays it,
then follows it live to its end. Every stream this instance relays is
followed by the cluster's `TailHub` (one blocking read for all of them),
within its limits in all and per session (503 beyond, before anything
reaches the home); a newer resume of a stream ends its older relay here.
A follower never hangs: a stream whose writer instance died before ending
it is ended, once, with -32603 for each request it still owed ("send it
again"), and a POST whose live home does not take it (mark its stream,
`accept`) within `TAKE_BLOCKS` half leases is answered 503 "send it again",
its stream ended so that the home skips it; an inbox full of unread ops
refuses more (503). Graceful shutdown (`aclose`)
releases the sessions, hands the inbox's unserved POSTs back (their
forwarders look again), lets requests in flight finish for up to
`CLOSE_TIMEOUT_S` (their answers stored: clients resume elsewhere) and ends
the GET streams. A SIGKILL loses the work in flight on that instance (its
requests are answered -32603 by whoever follows their streams, within a
lease and a half), the server's pending requests to clients, and
whatever session state is not recorded. A Redis that cannot be reached
makes a request that needs it 503 with a JSON-RPC error (-32603) and
`Retry-After`; sessions held locally go on serving what needs no Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from typing import TYPE_CHECKING, Any

import anyio

from mcp_specgen_runtime.protocol.request_state import principal_digest
from mcp_specgen_runtime.stores.events import (
    EventsEvictedError,
    UnknownEventError,
)
from mcp_specgen_runtime.stores.redis_events import END
from mcp_specgen_runtime.stores.redis_tails import TailLimitError

from ...errors import ErrorCode
from .answers import (
    PRIME_AFTER_S,
    PRIMING_VERSIONS,
    UNREAD,
    Refused,
    Unread,
    next_message,
    refuse,
    watch_disconnect,
)
from .asgi import respond, start_sse
from .auth import (
    AuthChallenge,
    authenticate_request,
    current_request,
)
from .cluster import InboxFullError, Op, abandoned_reply
from .headers import (
    LAST_EVENT_ID_HEADER,
    PROTOCOL_VERSION_HEADER,
    SESSION_HEADER,
    HttpError,
    HttpHeaders,
    protocol_version,
)
from .messages import (
    Batch,
    answer_ids,
    cancelled_ids,
    read_messages,
)
from .mux import RELEASE, ResponseStream
from .relay import (
    CLOSE_TIMEOUT_S,
    MOVES,
    NOT_TAKEN,
    RETRY,
    TAKE_BLOCKS,
    TOUCH_EVERY_S,
    Moved,
    RefusalRecord,
    do_nothing,
    effect_of,
    encode_alone,
    encode_record,
    forwarded_request,
    quietly,
    received_request,
    relay_entries,
    replay_state,
    resume_after,
    session_key,
    state_messages,
)
from .resumable import StoredStream, sse_event
from .sessions import (
    ANY_OWNER,
    LegacySession,
    SessionLimitError,
    SessionRegistry,
    is_valid_session_id,
)

if TYPE_CHECKING:
    import contextvars
    from collections.abc import (
        AsyncGenerator,
        Awaitable,
        Callable,
        Coroutine,
        Mapping,
    )

    from mcp_specgen_runtime.jsonrpc.envelope import (
        Envelope,
        RequestId,
    )
    from mcp_specgen_runtime.protocol.session import ServerSession
    from mcp_specgen_runtime.stores.events import Replay
    from mcp_specgen_runtime.stores.redis_events import Tailed
    from mcp_specgen_runtime.stores.redis_sessions import SessionState
    from mcp_specgen_runtime.stores.redis_tails import Tail

    from .auth import HttpRequest
    from .cluster import Cluster


logger = logging.getLogger(__name__)

_LIMITS = {
    "max_tails": ("max_relayed_streams", "by this server instance"),
    "max_tails_per_owner": (
        "max_relayed_streams_per_session",
        "for this session by this server instance",
    ),
}
"""A hub's limit: its name on `Cluster` and `McpHttpApp`, and whose it is."""


class LeaveBudget:
    """The time the Redis steps of leaving a cluster share: each Redis call
    may wait its socket timeout, and a Redis that stopped answering must not
    hold a shutdown once per step (or per session)."""

    def __init__(self, seconds: float = CLOSE_TIMEOUT_S) -> None:
        self.left = seconds

    @contextlib.asynccontextmanager
    async def spend(self) -> AsyncGenerator[None]:
        """Bound the block by what is left (`TimeoutError` past it), and
        take the time it took off."""
        began = time.monotonic()
        try:
            async with asyncio.timeout(max(self.left, 0.0)):
                yield
        finally:
            self.left -= time.monotonic() - began


class ClusterMember:
    """The cluster side of `McpHttpApp` (one of its bases): finding a legacy
    session's home, forwarding ops to it and relaying what it stores, serving
    the ops of this instance's inbox, rebuilding a session from its recorded state, and
    handing sessions over when leaving."""

    # The app's state these methods share (set by `McpHttpApp.__init__`).
    cluster: Cluster | None
    session: ServerSession
    sessions: SessionRegistry[LegacySession]
    retry_ms: int | None
    _live: dict[str, StoredStream]
    _answering: set[asyncio.Task[None]]
    _touched: dict[str, float]
    _locating: dict[str, asyncio.Lock]
    _detaching: dict[str, asyncio.Event]
    authenticate: Callable[[HttpRequest], Awaitable[object]] | None
    _leaving: bool

    if TYPE_CHECKING:  # the legacy session's side, defined by the app

        def _end(self, state: LegacySession, *, forget: bool = True) -> None: ...

        def _new_session(self, session_id: str = "") -> LegacySession: ...

        def _start_session(self, state: LegacySession) -> None: ...

        def _spawn(
            self,
            work: Coroutine[Any, Any, None],
            context: contextvars.Context | None = None,
        ) -> asyncio.Task[None]: ...

        async def _pump(
            self, state: LegacySession, stored: StoredStream, first: bytes | None = None
        ) -> None: ...

        def _stored_as(
            self, state: LegacySession, stream: ResponseStream, stream_id: str
        ) -> StoredStream: ...

        async def _post_legacy(
            self,
            headers: HttpHeaders,
            body: bytes,
            message: Envelope | Batch,
            receive: Any,
            send: Any,
            principal: object,
        ) -> None: ...

    async def _join(self, cluster: Cluster) -> None:
        if not cluster.started:
            await cluster.start(self._serve_op, self._drop_local)

    async def _find(self, session_id: str, principal: object) -> LegacySession | str:
        """The session `session_id` of `principal`: the local one, or, in a
        cluster, the id of the live instance serving it, else the session
        rebuilt here from its recorded state (this instance claimed it).

        Raises:
            Refused: 404, the session is unknown to `principal`.
        """
        state = self.sessions.get(session_id, principal)
        cluster = self.cluster
        if state is not None:
            if cluster is not None:
                self._touch(cluster, session_id)
            return state
        unknown = refuse(404, "Session not found (unknown or expired)")
        if (
            cluster is None
            or self._leaving
            or not is_valid_session_id(session_id)
            or session_id in self.sessions
        ):
            raise unknown
        lock = self._locating.setdefault(session_id, asyncio.Lock())
        try:
            async with lock:
                state = self.sessions.get(session_id, principal)
                if state is not None:
                    return state
                await self._join(cluster)
                route = await cluster.sessions.route(
                    session_id, principal_digest(principal), cluster.instance_id
                )
                if route.kind == "unknown":
                    raise unknown
                if route.kind == "remote":
                    return route.home
                return await self._rebuild(cluster, session_id, principal, route.state)
        finally:
            if not lock.locked():
                self._locating.pop(session_id, None)

    def _drop_local(self) -> None:
        """This instance's lease lapsed: other instances may have claimed its
        sessions, so its copies end here (their records stay, released when
        still naming it); the next request of each finds its home again."""
        cluster = self.cluster
        assert cluster is not None
        ids = self.sessions.ids()
        dropped = [self.sessions.discard(session_id) for session_id in ids]

        async def hand_back() -> None:
            # Those still naming this instance their home are claimed anew.
            await cluster.sessions.release_all(ids, cluster.instance_id)
            for state in dropped:
                if state is not None:
                    self._end(state, forget=False)

        self._spawn(quietly(hand_back()))

    def _touch(self, cluster: Cluster, session_id: str) -> None:
        """Renew the session's record in Redis, at most every few seconds,
        checking it is still served here (`_still_home`)."""
        now = time.monotonic()
        if now - self._touched.get(session_id, -math.inf) < TOUCH_EVERY_S:
            return
        self._touched[session_id] = now
        self._spawn(quietly(self._still_home(cluster, session_id)))

    async def _still_home(self, cluster: Cluster, session_id: str) -> None:
        """Renew the session's record; when it names another home (claimed
        while this instance's lease lapsed), end the copy here (the record
        stays): its next request goes to that home."""
        home = await cluster.sessions.touch(session_id)
        if home in ("", cluster.instance_id):
            return
        state = self.sessions.discard(session_id)
        if state is not None:
            logger.warning("session %.8s... has moved: its copy here ends", session_id)
            self._end(state, forget=False)

    async def _announce(
        self,
        session_id: str,
        state: LegacySession,
        principal: object,
        initialize: Envelope,
    ) -> None:
        """Record a session just opened here in the cluster (this instance
        its home); closed again when that fails."""
        assert self.cluster is not None
        cluster = self.cluster
        state.handler.key = session_key(session_id)
        self._record_effects(state)
        try:
            await self._join(cluster)
            await cluster.sessions.open(
                session_id,
                principal_digest(principal),
                cluster.instance_id,
                encode_alone(initialize),
            )
        except BaseException:
            closed = self.sessions.close(session_id, principal)
            if closed is not None:
                self._end(closed, forget=False)
            raise

    def _record_effects(self, state: LegacySession) -> None:
        """Keep in the session's record, once each succeeded, the effect of
        the messages that change its lasting state: what another instance
        needs to rebuild it."""
        assert self.cluster is not None
        sessions = self.cluster.sessions
        session_id = state.session_id

        async def record(method: str, params: bytes | None) -> None:
            change, value = effect_of(method, params)
            await sessions.record(session_id, change, value)

        state.handler.on_effect = record

    async def _rebuild(
        self,
        cluster: Cluster,
        session_id: str,
        principal: object,
        recorded: SessionState,
    ) -> LegacySession:
        """The session `session_id`, claimed by this instance: a fresh
        connection fed the messages that rebuild its recorded state (the
        answers discarded)."""
        state = self._new_session(session_id)
        state.handler.key = session_key(session_id)
        self._start_session(state)
        for entry in state_messages(recorded):
            await replay_state(state.mux, entry)
        self._record_effects(state)
        try:
            self.sessions.adopt(session_id, state, principal)
        except SessionLimitError:
            self._end(state, forget=False)
            await cluster.sessions.release(session_id, cluster.instance_id)
            raise Refused(
                HttpError(503, "Too many sessions; try again later"),
                {"retry-after": "30"},
            ) from None
        logger.info("session %.8s... rebuilt on this instance", session_id)
        return state

    async def _forward_post(
        self,
        home: str,
        session_id: str,
        headers: HttpHeaders,
        body: bytes,
        message: Envelope | Batch,
        receive: Any,
        send: Any,
        principal: object,
    ) -> None:
        """Serve a POST of a session another instance holds: hand it over
        through that instance's inbox and relay the answer it stores. A
        session that moved meanwhile is looked up again."""
        assert self.cluster is not None
        cluster = self.cluster
        ids = answer_ids(message)
        extra = {SESSION_HEADER: session_id}
        for _ in range(MOVES):
            op = Op(
                "post" if ids else "notify",
                session_id,
                body=body,
                version=headers.get(PROTOCOL_VERSION_HEADER),
                request=forwarded_request(current_request.get()),
            )
            if not ids:
                await self._send_op(cluster, home, op)
                replies = message.replies() if isinstance(message, Batch) else []
                if replies:
                    answer = b"[" + b",".join(replies) + b"]"
                    await respond(send, 400, answer, "application/json", extra)
                    return
                await respond(send, 202, b"", None, extra)
                return
            with self._open_tail(cluster, session_id) as tail:
                op.stream = await cluster.events.create_stream(
                    session_id, writer=home, requests=ids
                )
                cluster.tails.follow(tail, op.stream)
                await self._send_op(cluster, home, op)
                try:
                    await self._relay_answer(cluster, tail, ids, receive, send, extra)
                    return
                except Moved:
                    pass
            found = await self._find(session_id, principal)
            if not isinstance(found, str):
                await self._post_legacy(
                    headers, body, message, receive, send, principal
                )
                return
            home = found
        raise Refused(
            HttpError(
                503, "the session is moving; try again", ErrorCode.INTERNAL_ERROR
            ),
            RETRY,
        )

    async def _send_op(self, cluster: Cluster, home: str, op: Op) -> None:
        """Send `op` to `home`'s inbox; a full one (the home is not keeping
        up) is 503 with `Retry-After`."""
        try:
            await cluster.send(home, op)
        except InboxFullError:
            raise Refused(
                HttpError(
                    503,
                    "the session's server instance is overloaded; try again",
                    ErrorCode.INTERNAL_ERROR,
                ),
                RETRY,
            ) from None

    async def _taken(
        self, cluster: Cluster, tail: Tail, reply_id: RequestId | None
    ) -> AsyncGenerator[Tailed]:
        """The entries of a forwarded POST's stream; when the home, alive,
        has not taken the op (its `ACCEPTED` mark) within `TAKE_BLOCKS`
        block periods, the stream is ended with a 503 refusal ("send it
        again") first, which the home then sees and skips the op."""
        assert tail.stream is not None
        first: Tailed | None = None
        waited = True
        with anyio.move_on_after(TAKE_BLOCKS * cluster.block_s):
            first = await tail.next()
            waited = False
        if waited:  # whichever comes first, the refusal or the mark, is read
            record = RefusalRecord(
                503, NOT_TAKEN, ErrorCode.INTERNAL_ERROR, reply_id=reply_id
            )
            await cluster.events.end_untouched(tail.stream, encode_record(record))
            first = await tail.next()
        while first is not None:
            yield first
            first = await tail.next()

    async def _relay_answer(
        self,
        cluster: Cluster,
        tail: Tail,
        ids: frozenset[RequestId],
        receive: Any,
        send: Any,
        extra: Mapping[str, str],
    ) -> None:
        """Answer a forwarded POST from its stored stream (followed by
        `tail`): JSON when its first message completes it, else SSE with the
        stored event ids.

        Raises:
            Refused: the home refused it (the same answer as here).
            Moved: the home left before serving it.
        """
        only = next(iter(ids)) if len(ids) == 1 else None
        entries = self._taken(cluster, tail, only)
        outcome: Refused | Moved | None = None
        probe = ResponseStream(ids)  # only to tell when the answer is whole
        try:
            async with contextlib.aclosing(entries), anyio.create_task_group() as tasks:
                tasks.start_soon(
                    watch_disconnect, receive, do_nothing, tasks.cancel_scope
                )
                outcome = await relay_entries(
                    entries, probe, send, extra, self.retry_ms
                )
                tasks.cancel_scope.cancel()
        finally:
            probe.end()
        if outcome is not None:
            raise outcome

    def _open_tail(
        self, cluster: Cluster, session_id: str, replaces: str | None = None
    ) -> Tail:
        """A follower of one of the session's streams (see `TailHub.open`);
        at a limit, 503 saying which."""
        try:
            return cluster.tails.open(session_id, replaces=replaces)
        except TailLimitError as limit:
            which = _LIMITS[limit.which]
            raise Refused(
                HttpError(
                    503,
                    f"too many streams relayed {which[1]} "
                    f"({which[0]}={limit.limit}); try again later",
                    ErrorCode.INTERNAL_ERROR,
                    {"limit": which[0], "value": limit.limit},
                ),
                RETRY,
            ) from None

    async def _forward_get(
        self,
        home: str,
        session_id: str,
        headers: HttpHeaders,
        receive: Any,
        send: Any,
    ) -> None:
        """A GET of a session another instance holds: a resume is replayed
        from the store, then followed; a new stream is opened by the home
        (replacing its previous one) and relayed."""
        assert self.cluster is not None
        cluster = self.cluster
        extra = {SESSION_HEADER: session_id}
        last_event_id = headers.get(LAST_EVENT_ID_HEADER)
        if last_event_id:
            await self._relay_replayed(last_event_id, session_id, send, receive)
            return
        with self._open_tail(cluster, session_id) as tail:
            stream_id = await cluster.events.create_stream(session_id, writer=home)
            cluster.tails.follow(tail, stream_id)
            await self._send_op(cluster, home, Op("get", session_id, stream=stream_id))
            try:
                await self._relay_resumed(tail, b": open\n\n", send, receive, extra)
            finally:  # the home holds the session no longer (it goes on storing)
                detach = Op("detach", session_id, stream=stream_id)
                await quietly(cluster.send(home, detach))

    async def _relay_replayed(
        self, last_event_id: str, session_id: str, send: Any, receive: Any
    ) -> None:
        """A resume of a stream not written here: what followed
        `last_event_id` in the store, then the stream live, to its end. An
        older relay of that stream for this session ends (replaced).

        Raises:
            Refused: 400, nothing to resume from there; 503, at a limit.
        """
        assert self.cluster is not None
        cluster = self.cluster
        try:
            replay = await cluster.events.replay(last_event_id, session_id)
        except (UnknownEventError, EventsEvictedError) as error:
            raise refuse(400, f"Cannot resume: {error}") from None
        await self._follow_replay(last_event_id, replay, session_id, send, receive)

    async def _follow_replay(
        self,
        last_event_id: str,
        replay: Replay,
        session_id: str,
        send: Any,
        receive: Any,
    ) -> None:
        """Send what `replay` found after `last_event_id`, then follow its
        stream live; an older relay of it for this session ends."""
        assert self.cluster is not None
        cluster = self.cluster
        head = b"".join(sse_event(e.id, e.message) for e in replay.events)
        with self._open_tail(cluster, session_id, replay.stream) as tail:
            after = resume_after(last_event_id, replay)
            cluster.tails.follow(tail, replay.stream, after)
            extra = {SESSION_HEADER: session_id}
            await self._relay_resumed(tail, head, send, receive, extra)

    async def _relay_resumed(
        self,
        tail: Tail,
        head: bytes,
        send: Any,
        receive: Any,
        extra: Mapping[str, str],
    ) -> None:
        """Send `head`, then the entries `tail` follows as they come, to
        the stream's end marker, until the client leaves, or until the tail
        stops (replaced by a newer resume, or too slow a client: it resumes
        from the last event it got)."""
        primed = tail.after == "0-0"
        await start_sse(send, extra)
        if head:
            await send({"type": "http.response.body", "body": head, "more_body": True})
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watch_disconnect, receive, do_nothing, tasks.cancel_scope)
            tasks.start_soon(self._keep_record, extra[SESSION_HEADER])
            async for entry in tail:
                if entry.kind == END:
                    break
                if entry.kind == "m":
                    body = sse_event(entry.id, entry.value)
                elif entry.kind == "p" and primed:
                    body = sse_event(entry.id, None, self.retry_ms)
                else:
                    continue
                await send(
                    {"type": "http.response.body", "body": body, "more_body": True}
                )
            tasks.cancel_scope.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _keep_record(self, session_id: str) -> None:
        """Renew the session's record in Redis while a stream of it is
        relayed here (an open stream keeps a session alive, as at home)."""
        assert self.cluster is not None
        sessions = self.cluster.sessions
        if not sessions.ttl_ms:
            return
        every = min(TOUCH_EVERY_S, sessions.ttl_ms / 3000)
        while True:
            await anyio.sleep(every)
            await quietly(sessions.touch(session_id))

    async def _delete_remote(
        self, cluster: Cluster, session_id: str, principal: object
    ) -> None:
        """DELETE of a session this instance does not hold: its home (if
        alive) is told, and its record goes at once."""
        if not is_valid_session_id(session_id):
            raise refuse(404, "Session not found (unknown or expired)")
        await self._join(cluster)
        route = await cluster.sessions.route(
            session_id, principal_digest(principal), cluster.instance_id, claim=False
        )
        if route.kind == "unknown":
            raise refuse(404, "Session not found (unknown or expired)")
        await cluster.sessions.delete(session_id)
        if route.kind != "remote":
            await cluster.events.drop_owner(session_id)
            return
        # Wait for the home to end it, so that no instance serves it after.
        with self._open_tail(cluster, session_id) as tail:
            stream_id = await cluster.events.create_stream(
                session_id, writer=route.home
            )
            cluster.tails.follow(tail, stream_id)
            await self._send_op(
                cluster, route.home, Op("delete", session_id, stream=stream_id)
            )
            async for _ in tail:
                pass

    async def _serve_op(self, op: Op) -> None:
        """Do what another instance asks of a session held here (the
        inbox reader calls this, in order: feeding is done before it
        returns, longer work in tasks)."""
        assert self.cluster is not None
        if op.op == "detach":
            detaching = self._detaching.get(op.stream)
            if detaching is not None:
                detaching.set()
            return
        state = self.sessions.find(op.session)
        if op.op == "delete":
            if state is not None:
                self.sessions.discard(op.session)
                self._end(state)
            if op.stream:
                await self.cluster.events.end(op.stream)
            return
        if state is None or (self._leaving and op.op != "notify"):
            await self._unplaced(op)
            return
        if op.op == "notify":
            message = read_messages(op.body)
            with contextlib.suppress(anyio.ClosedResourceError):
                state.mux.feed(op.body, None)
            for cancelled in cancelled_ids(message):
                state.mux.cancelled(cancelled)
        elif op.op == "get":
            await self._open_forwarded_get(state, op)
        elif op.op == "post":
            if not await self.cluster.events.accept(op.stream):
                return  # its forwarder gave up waiting: the client sends again
            try:
                await self._serve_forwarded_post(state, op)
            except Exception as error:  # its forwarder must not wait for ever
                logger.exception("a forwarded POST could not be served")
                record = RefusalRecord(
                    500,
                    f"the session's server failed: {error}",
                    ErrorCode.INTERNAL_ERROR,
                )
                await self.cluster.events.end(op.stream, encode_record(record))

    async def _unplaced(self, op: Op) -> None:
        """An op for a session not held here (any more): a POST is told to
        look again (this instance is leaving) or that the session is gone;
        a GET stream just ends."""
        assert self.cluster is not None
        if op.op == "post" and op.stream:
            if self._leaving:
                record = RefusalRecord(
                    503, "moved", ErrorCode.INTERNAL_ERROR, moved=True
                )
            else:
                record = RefusalRecord(
                    404, "Session not found (closed)", ErrorCode.INVALID_REQUEST
                )
            await self.cluster.events.end(op.stream, encode_record(record))
        elif op.op == "get" and op.stream:
            await self.cluster.events.end(op.stream)
        else:
            logger.info("a %s op for a session not held here was dropped", op.op)

    async def _serve_forwarded_post(self, state: LegacySession, op: Op) -> None:
        """A POST another instance took for a session held here: checked as
        a local one, fed to the session, its answer stored."""
        assert self.cluster is not None
        events = self.cluster.events
        message = read_messages(op.body)
        headers = HttpHeaders(
            {} if op.version is None else {PROTOCOL_VERSION_HEADER: op.version}
        )
        version = protocol_version(
            headers,
            self.session.legacy_versions,
            negotiated=state.handler.protocol_version,
        )
        refused: HttpError | None = None
        reply_id: RequestId | None = None
        ids = answer_ids(message)
        taken = state.mux.in_flight(ids)
        if isinstance(version, HttpError):
            refused = version
        elif isinstance(message, Batch) and not state.connection.allow_batches:
            refused = HttpError(
                400, "batches are not supported by the negotiated protocol revision"
            )
        elif taken:
            refused = HttpError(400, f"request id {taken[0]!r} is already in flight")
            reply_id = taken[0]
        principal: object = None
        if refused is None:
            try:
                principal = await self._forwarded_principal(op)
            except AuthChallenge as challenge:
                record = RefusalRecord(
                    challenge.status,
                    challenge.message,
                    ErrorCode.INVALID_REQUEST,
                    www_authenticate=challenge.www_authenticate,
                )
                await events.end(op.stream, encode_record(record))
                return
            except Refused as refusal:
                refused = refusal.error
        if refused is not None:
            record = RefusalRecord(
                refused.status,
                refused.message,
                refused.code,
                reply_id,
                data=refused.data,
            )
            await events.end(op.stream, encode_record(record))
            return
        stream = ResponseStream(ids)
        stream.principal = principal
        if op.request is not None:
            stream.http_request = received_request(op.request)
        stream.resumable = state.handler.protocol_version in PRIMING_VERSIONS
        try:
            state.mux.feed(op.body, stream)
        except anyio.ClosedResourceError:
            record = RefusalRecord(
                404, "Session not found (closed)", ErrorCode.INVALID_REQUEST
            )
            await events.end(op.stream, encode_record(record))
            return
        for cancelled in cancelled_ids(message):
            state.mux.cancelled(cancelled)
        stored = self._stored_as(state, stream, op.stream)
        task = self._spawn(self._answer_forwarded(state, stored))
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def _forwarded_principal(self, op: Op) -> object:
        """Who sent a forwarded request, as this instance's `authenticate`
        says of it (None without one): the object itself, which handlers see
        as they would at home.

        Raises:
            AuthChallenge: as for a request received here.
            Refused: 404, the principal is not the session's owner.
        """
        if self.authenticate is None:
            return None
        if op.request is None:
            raise AuthChallenge(
                401, "Bearer", "Unauthorized: missing or invalid credentials"
            )
        principal = await authenticate_request(
            self.authenticate, received_request(op.request)
        )
        if self.sessions.get(op.session, principal) is None:
            raise refuse(404, "Session not found (unknown or expired)")
        return principal

    async def _answer_forwarded(
        self, state: LegacySession, stored: StoredStream
    ) -> None:
        """Store the answer of a forwarded POST: its first message alone
        when it completes it (the forwarder answers JSON), else after a
        priming event (2025-11-25, once it lingers), to its end."""
        first: bytes | Unread | None = UNREAD
        pumping = False
        try:
            if state.handler.protocol_version in PRIMING_VERSIONS:
                with anyio.move_on_after(PRIME_AFTER_S):
                    first = await next_message(stored.source)
                if first == RELEASE:
                    first = UNREAD
                if not isinstance(first, bytes) or not stored.source.completed_by(
                    first
                ):
                    await stored.prime()
            pumping = True
            await self._pump(state, stored, first if isinstance(first, bytes) else None)
        finally:
            if not pumping:  # cancelled first: `_pump` would have done this
                self._live.pop(stored.id, None)
                state.mux.forget(stored.source)
                await self._end_stream(stored)

    async def _open_forwarded_get(self, state: LegacySession, op: Op) -> None:
        """The standalone stream opened through another instance: stored
        into `op.stream`, replacing the previous one."""
        current = state.standalone
        if current is not None:
            current.source.close()  # its pump stores what is queued, then ends
        stream = ResponseStream()
        state.mux.open_standalone(stream)
        stored = self._stored_as(state, stream, op.stream)
        state.standalone = stored
        if state.handler.protocol_version in PRIMING_VERSIONS:
            await stored.prime()
        pump = self._spawn(self._pump(state, stored))
        detaching = self._detaching[op.stream] = asyncio.Event()
        self._spawn(self._hold_while_relayed(op.session, op.stream, pump, detaching))

    async def _hold_while_relayed(
        self,
        session_id: str,
        stream_id: str,
        pump: asyncio.Task[None],
        detaching: asyncio.Event,
    ) -> None:
        """Hold the session (it cannot idle out) while another instance
        relays its standalone stream: until that instance's client leaves
        (a "detach" op) or the stream ends."""
        detached = asyncio.ensure_future(detaching.wait())
        try:
            with self.sessions.use(session_id, ANY_OWNER):
                await asyncio.wait(
                    {pump, detached}, return_when=asyncio.FIRST_COMPLETED
                )
        finally:
            detached.cancel()
            self._detaching.pop(stream_id, None)

    async def _end_stream(self, stored: StoredStream) -> None:
        """Mark a stored stream ended, answering with -32603 the requests
        it still owed (their handlers did not finish)."""
        assert self.cluster is not None
        owed = [abandoned_reply(i) for i in sorted(stored.source.unanswered, key=repr)]
        try:
            await self.cluster.events.end(stored.id, messages=owed)
        except Exception as error:  # readers then see the writer die
            logger.warning("could not end stream %.8s...: %s", stored.id, error)

    async def _leave(self, cluster: Cluster, budget: LeaveBudget) -> None:
        """Graceful shutdown in a cluster: release every session held here
        (the next request rebuilds it elsewhere), send back the ops still in
        the inbox (a POST's forwarder looks again), and let the requests in
        flight finish, up to `CLOSE_TIMEOUT_S`, their answers stored. The
        Redis steps spend `budget` (a frozen Redis costs it once)."""
        if not cluster.started or cluster.closed:
            return
        self._leaving = True
        for session_id in self.sessions.ids():
            state = self.sessions.find(session_id)
            if state is not None:  # their answers will reach the next home
                state.connection.fail_pending(
                    "the session moved to another server instance"
                )
        try:
            async with budget.spend():
                await cluster.sessions.release_all(
                    self.sessions.ids(), cluster.instance_id
                )
        except Exception as error:
            logger.warning("could not release the sessions: %r", error)
        try:
            async with budget.spend():
                for op in await cluster.stop_reading():
                    try:
                        await self._serve_op(op)
                    except Exception as error:
                        if isinstance(error, TimeoutError):
                            raise
                        logger.warning("a %s op left unserved: %s", op.op, error)
        except Exception as error:
            logger.warning("could not hand the inbox back: %r", error)
        if self._answering:
            await asyncio.wait(set(self._answering), timeout=CLOSE_TIMEOUT_S)
