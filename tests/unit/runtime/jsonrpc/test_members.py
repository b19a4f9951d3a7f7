"""`pick_members`: the wanted top-level members, as written, or None."""

from __future__ import annotations

import msgspec
import pytest

from mcp_specgen_runtime.jsonrpc.members import pick_members

WANTED = frozenset({"_meta", "name", "task"})


@pytest.mark.parametrize(
    "doc",
    [
        b'{"name":"echo","arguments":{"message":"' + b"x" * 100_000 + b'"}}',
        b' { "arguments" : [1, "a]\\"}", {"b": [true, null]}] , "name" : "e" } ',
        b'{"_meta":{"progressToken":7},"name":"e","arguments":{}}',
        b'{"arguments":{"m":"\\\\"},"task":{"ttl":5},"_meta":{"k":"}"}}',
        b'{"\\u005fmeta":{"a":1},"n\\"ame":2,"name":-1.5e3}',
        b'{"name":"a","name":"b"}',
        b"{}",
        b'{"arguments":""}',
    ],
)
def test_picks_what_a_full_decode_would_see(doc: bytes) -> None:
    picked = pick_members(doc, WANTED)
    assert picked is not None
    full = msgspec.json.decode(doc)
    assert msgspec.json.decode(picked) == {
        key: value for key, value in full.items() if key in WANTED
    }


@pytest.mark.parametrize(
    "doc",
    [
        b"[1,2]",
        b'"name"',
        b'{"name":"echo"',
        b'{"name" "echo"}',
        b'{"name":"echo"} trailing',
        b'{"name":"ec',
        b'{name:"echo"}',
        b'{"a":{"b":[1,2}',
        b'{"\xff":1}',
        b'{"a":,"name":1}',
    ],
)
def test_gives_up_on_what_it_does_not_read(doc: bytes) -> None:
    assert pick_members(doc, WANTED) is None


def test_gives_up_past_its_budget() -> None:
    many = b'{"arguments":[' + b",".join([b'"s"'] * 50) + b'],"name":"e"}'
    assert pick_members(many, WANTED, budget=10) is None
    assert pick_members(many, WANTED, budget=1000) == b'{"name":"e"}'
