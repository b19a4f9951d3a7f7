"""`scan_id`: the id of a message known only by its ends."""

from __future__ import annotations

import pytest

from mcp_specgen_runtime.jsonrpc.id_scan import Located, scan_id


@pytest.mark.parametrize(
    ("head", "tail", "found"),
    [
        # The Python SDK writes the id first...
        (b'{"jsonrpc":"2.0","id":5,"result":{"a":[1,2', b"", Located(5, True)),
        (
            b'{ "jsonrpc" : "2.0" , "params":{"id":1}, "id" : -12 , "method"',
            b"",
            Located(-12, False),
        ),
        # ...the TypeScript SDK last.
        (b'{"result":{"x":"', b'aaa"}},"jsonrpc":"2.0","id":7}', Located(7, True)),
        (
            b'{"method":"x","params":{"id":3,',
            b'"z"]},"jsonrpc":"2.0","id":"a\\"b"} ',
            Located('a"b', False),
        ),
        (b'{"id":1,"id":2,"method":"x"', b"", Located(2, False)),  # the last wins
        # No usable id.
        (b"[[[", b"]]]", Located(None, False)),
        (b'{"id":true,"method":"x"', b"", Located(None, False)),
        (b'{"id":1.5,"method":"x"', b"", Located(None, False)),
        (b'{"id":"\xff","method":"x"', b"", Located(None, False)),
        (b'{"id":null,"error":{}', b"", Located(None, True)),
        (b'garbage{"id":1', b"", Located(None, False)),
        (b'{"params":{"id":1,"x":[', b'],"id":2}]}', Located(None, False)),
        (b"", b'{"a":1}', Located(None, False)),
    ],
)
def test_the_top_level_id_is_found_at_either_end(
    head: bytes, tail: bytes, found: Located
) -> None:
    assert scan_id(head, tail) == found
