"""Legacy session ids and `SessionRegistry`: validation, idle expiry (lazy and by
`sweep`), sessions held in use, and the cap on live sessions."""

from __future__ import annotations

import pytest

from mcp_specgen_runtime.errors import McpError
from mcp_specgen_runtime.transports.http import (
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS,
    MAX_SESSION_ID_LENGTH,
    SESSION_ID_HEADER,
    SessionLimitError,
    SessionRegistry,
    is_valid_session_id,
    new_session_id,
)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def registry(
    clock: Clock,
    *,
    idle: float | None = 10.0,
    limit: int | None = None,
    per_owner: int | None = None,
    expired: list[tuple[str, str]] | None = None,
) -> SessionRegistry[str]:
    def on_expire(session_id: str, value: str) -> None:
        if expired is not None:
            expired.append((session_id, value))

    return SessionRegistry(
        idle_timeout_s=idle,
        max_sessions=limit,
        max_sessions_per_owner=per_owner,
        on_expire=on_expire,
        clock=clock,
    )


# --- ids ------------------------------------------------------------------------


def test_new_ids_are_random_visible_ascii() -> None:
    ids = {new_session_id() for _ in range(200)}
    assert len(ids) == 200
    for session_id in ids:
        assert len(session_id) == 43
        assert all(0x21 <= ord(c) <= 0x7E for c in session_id)
        assert is_valid_session_id(session_id)
    assert SESSION_ID_HEADER == "Mcp-Session-Id"


@pytest.mark.parametrize(
    "value",
    ["a", "!", "~", "x" * MAX_SESSION_ID_LENGTH, "abc-DEF_123.~!"],
)
def test_valid_ids(value: str) -> None:
    assert is_valid_session_id(value)


@pytest.mark.parametrize(
    "value",
    [
        "",
        " ",
        "has space",
        "tab\t",
        "new\nline",
        "del\x7f",
        "caf\xe9",
        "日本",
        "x" * (MAX_SESSION_ID_LENGTH + 1),
    ],
)
def test_invalid_ids(value: str) -> None:
    assert not is_valid_session_id(value)


# --- the registry ---------------------------------------------------------------


def test_defaults_follow_the_python_sdk() -> None:
    sessions: SessionRegistry[object] = SessionRegistry()
    assert sessions.idle_timeout_s == DEFAULT_IDLE_TIMEOUT_S == 1800
    assert sessions.max_sessions == DEFAULT_MAX_SESSIONS == 10_000


@pytest.mark.parametrize("idle", [0, -1.0, float("nan")])
def test_the_idle_timeout_must_be_positive(idle: float) -> None:
    with pytest.raises(ValueError, match="idle_timeout_s"):
        SessionRegistry[str](idle_timeout_s=idle)


def test_the_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_sessions"):
        SessionRegistry[str](max_sessions=0)


def test_create_get_close() -> None:
    sessions = registry(Clock())
    first, second = sessions.create("one"), sessions.create("two")
    assert first != second
    assert len(sessions) == 2
    assert first in sessions
    assert sessions.get(first) == "one"
    assert sessions.get(second) == "two"
    assert sessions.close(first) == "one"
    assert sessions.get(first) is None
    assert sessions.close(first) is None
    assert first not in sessions
    assert len(sessions) == 1


def test_unknown_and_invalid_ids_are_not_found() -> None:
    sessions = registry(Clock())
    sessions.create("one")
    for session_id in ("unknown", "", "bad id", "x" * 1000, "caf\xe9"):
        assert sessions.get(session_id) is None
        assert sessions.close(session_id) is None
        with sessions.use(session_id) as value:
            assert value is None


def test_an_invalid_id_is_refused_before_lookup() -> None:
    sessions = registry(Clock())
    sessions._entries["bad id"] = sessions._entries.pop(sessions.create("v"))
    assert sessions.get("bad id") is None
    assert sessions.close("bad id") is None


def test_a_session_expires_after_the_idle_timeout() -> None:
    clock = Clock()
    expired: list[tuple[str, str]] = []
    sessions = registry(clock, expired=expired)
    session_id = sessions.create("v")
    clock.now += 9
    assert sessions.get(session_id) == "v"  # restarts the idle time
    clock.now += 9
    assert sessions.get(session_id) == "v"
    assert expired == []
    clock.now += 10.0
    assert sessions.get(session_id) is None
    assert expired == [(session_id, "v")]
    assert len(sessions) == 0


def test_expired_sessions_are_swept_lazily_by_create() -> None:
    clock = Clock()
    expired: list[tuple[str, str]] = []
    sessions = registry(clock, expired=expired)
    old = sessions.create("old")
    clock.now += 10
    new = sessions.create("new")
    assert expired == [(old, "old")]
    assert list(sessions._entries) == [new]


def test_sweep_removes_only_the_idle_and_reports_them() -> None:
    clock = Clock()
    expired: list[tuple[str, str]] = []
    sessions = registry(clock, expired=expired)
    a = sessions.create("a")
    clock.now += 5
    b = sessions.create("b")
    clock.now += 3
    c = sessions.create("c")
    assert sessions.get(a) == "a"  # a is now the most recently used
    assert sessions.sweep(clock.now + 8) == [(b, "b")]  # idle for 11 s
    assert expired == [(b, "b")]
    assert sessions.sweep(clock.now + 10) == [(c, "c"), (a, "a")]
    assert expired == [(b, "b"), (c, "c"), (a, "a")]
    assert sessions.sweep() == []
    assert len(sessions) == 0


def test_sweep_defaults_to_the_clock() -> None:
    clock = Clock()
    sessions = registry(clock)
    session_id = sessions.create("v")
    assert sessions.sweep() == []
    clock.now += 10
    assert sessions.sweep() == [(session_id, "v")]


def test_without_a_timeout_nothing_expires() -> None:
    clock = Clock()
    sessions = registry(clock, idle=None)
    session_id = sessions.create("v")
    clock.now += 1e9
    assert sessions.sweep() == []
    assert sessions.get(session_id) == "v"


def test_expiry_works_without_a_callback() -> None:
    clock = Clock()
    sessions: SessionRegistry[int] = SessionRegistry(idle_timeout_s=1, clock=clock)
    session_id = sessions.create(1)
    clock.now += 1
    assert sessions.get(session_id) is None


def test_a_session_in_use_does_not_expire() -> None:
    clock = Clock()
    expired: list[tuple[str, str]] = []
    sessions = registry(clock, expired=expired)
    held = sessions.create("held")
    other = sessions.create("other")
    with sessions.use(held) as value:
        assert value == "held"
        clock.now += 100
        assert sessions.sweep() == [(other, "other")]
        assert sessions.get(held) == "held"
        with sessions.use(held) as again:  # uses nest
            assert again == "held"
        clock.now += 100
        assert sessions.sweep() == []
    # Released: its idle time starts now.
    clock.now += 9
    assert sessions.sweep() == []
    clock.now += 1
    assert sessions.sweep() == [(held, "held")]
    assert expired == [(other, "other"), (held, "held")]


def test_a_session_closed_while_in_use_stays_closed() -> None:
    sessions = registry(Clock())
    session_id = sessions.create("v")
    with sessions.use(session_id) as value:
        assert value == "v"
        assert sessions.close(session_id) == "v"
    assert session_id not in sessions


def test_a_session_is_released_when_the_block_raises() -> None:
    clock = Clock()
    sessions = registry(clock)
    session_id = sessions.create("v")
    with pytest.raises(RuntimeError), sessions.use(session_id):
        raise RuntimeError
    clock.now += 10
    assert sessions.sweep() == [(session_id, "v")]


def test_the_cap_refuses_new_sessions_and_keeps_the_old() -> None:
    clock = Clock()
    sessions = registry(clock, limit=2)
    first, second = sessions.create("1"), sessions.create("2")
    with pytest.raises(SessionLimitError) as caught:
        sessions.create("3")
    assert caught.value.limit == 2
    assert isinstance(caught.value, McpError)
    assert "2" in str(caught.value)
    assert sessions.get(first) == "1"
    assert sessions.get(second) == "2"
    sessions.close(first)
    assert sessions.create("3") in sessions


def test_the_cap_counts_only_live_sessions() -> None:
    clock = Clock()
    expired: list[tuple[str, str]] = []
    sessions = registry(clock, limit=1, expired=expired)
    old = sessions.create("old")
    clock.now += 10
    sessions.create("new")
    assert expired == [(old, "old")]


def test_close_all_empties_the_registry() -> None:
    sessions = registry(Clock())
    a, b = sessions.create("a"), sessions.create("b")
    assert sessions.close_all() == [(a, "a"), (b, "b")]
    assert len(sessions) == 0
    assert sessions.close_all() == []


def test_a_clock_going_backwards_does_not_revive_old_times() -> None:
    clock = Clock()
    sessions = registry(clock)
    session_id = sessions.create("v")
    clock.now -= 50
    assert sessions.get(session_id) == "v"
    clock.now += 50 + 10
    assert sessions.sweep() == [(session_id, "v")]


# --- owners ---------------------------------------------------------------------


def test_a_session_is_found_only_by_its_owner() -> None:
    sessions = registry(Clock())
    session_id = sessions.create("a", owner="alice")
    assert sessions.get(session_id, owner="bob") is None
    assert sessions.get(session_id) is None  # anonymous is another owner
    with sessions.use(session_id, owner="bob") as state:
        assert state is None
    assert sessions.close(session_id, owner="bob") is None
    assert sessions.get(session_id, owner="alice") == "a"
    assert sessions.close(session_id, owner="alice") == "a"


def test_owners_are_compared_by_equality_hashable_or_not() -> None:
    sessions = registry(Clock(), per_owner=1)
    session_id = sessions.create("a", owner={"sub": "alice"})
    assert sessions.get(session_id, owner={"sub": "alice"}) == "a"
    assert sessions.get(session_id, owner={"sub": "bob"}) is None
    replaced = sessions.create("b", owner={"sub": "alice"})  # alice's cap: 1
    assert session_id not in sessions
    assert sessions.get(replaced, owner={"sub": "alice"}) == "b"


def test_an_owner_at_its_cap_evicts_its_own_least_recently_used_session() -> None:
    clock = Clock()
    expired: list[tuple[str, str]] = []
    sessions = registry(clock, per_owner=2, expired=expired)
    first = sessions.create("a1", owner="alice")
    clock.now += 1
    second = sessions.create("a2", owner="alice")
    clock.now += 1
    other = sessions.create("b1", owner="bob")
    clock.now += 1
    assert sessions.get(first, owner="alice") == "a1"  # now second is the oldest
    third = sessions.create("a3", owner="alice")
    assert expired == [(second, "a2")]
    assert all(sid in sessions for sid in (first, third, other))
    assert len(sessions) == 3
    assert sessions.get(other, owner="bob") == "b1"


def test_an_owner_whose_sessions_are_all_in_use_is_refused_alone() -> None:
    sessions = registry(Clock(), per_owner=1)
    held = sessions.create("a1", owner="alice")
    with sessions.use(held, owner="alice"):
        with pytest.raises(SessionLimitError):
            sessions.create("a2", owner="alice")
        sessions.create("b1", owner="bob")
    assert sessions.get(held, owner="alice") == "a1"


def test_anonymous_sessions_share_one_owner() -> None:
    expired: list[tuple[str, str]] = []
    sessions = registry(Clock(), per_owner=2, expired=expired)
    first = sessions.create("x")
    sessions.create("y")
    sessions.create("z")
    assert expired == [(first, "x")]
    assert len(sessions) == 2


def test_the_per_owner_cap_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_sessions_per_owner"):
        SessionRegistry[str](max_sessions_per_owner=0)


def test_adopt_registers_a_session_under_an_id_given_elsewhere() -> None:
    registry: SessionRegistry[str] = SessionRegistry(max_sessions=1)
    registry.adopt("s" * 43, "rebuilt", "alice")
    assert registry.get("s" * 43, "alice") == "rebuilt"
    assert registry.get("s" * 43, "bob") is None
    assert registry.find("s" * 43) == "rebuilt"
    with pytest.raises(ValueError, match="cannot adopt"):
        registry.adopt("s" * 43, "again", "alice")
    with pytest.raises(ValueError, match="cannot adopt"):
        registry.adopt("bad id", "x")
    with pytest.raises(SessionLimitError):
        registry.adopt("t" * 43, "over", "alice")
    assert registry.ids() == ["s" * 43]
    assert registry.discard("s" * 43) == "rebuilt"
    assert registry.discard("s" * 43) is None
    assert registry.find("s" * 43) is None


def test_first_request_ids_are_random_and_stay_exact_in_javascript() -> None:
    from mcp_specgen_runtime.transports.http.sessions import (
        FIRST_REQUEST_IDS,
        first_request_id,
    )

    found = {first_request_id() for _ in range(100)}
    assert len(found) == 100
    assert all(0 < found_id <= FIRST_REQUEST_IDS for found_id in found)
    assert FIRST_REQUEST_IDS + 2**32 <= 2**53
