"""What keeping MCP's guarantees costs on top of msgspec, in the smallest script.

MCP objects are open (a key the schema does not name must be kept, not
dropped or refused) and tagged requests must carry their tag. msgspec can do
neither natively, so a codec on top of it pays three costs on every message:

1. the tag guard: `Union[T, Never]` so that msgspec insists on the tag;
2. room for unknown keys: `dict=True` (and GC tracking, which `dict=True`
   forces) on every decoded object, though few messages carry any;
3. a Python wrapper: `forbid_unknown_fields=True` plus a `try` that falls
   back to a slow path setting unknown keys aside.

Run: python docs/benchmarks/msgspec_upstream_repro.py  (best of 15 alternating
rounds, ns per decode)
"""

import time
import typing
from typing import Literal

import msgspec

RAW = (
    b'{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"search",'
    b'"arguments":{"query":"msgspec","limit":10},"_meta":{"progressToken":"t"}}}'
)


def types(**config: typing.Any) -> type[msgspec.Struct]:
    """A tools/call request as msgspec Structs, with `config` on each class."""

    class Meta(msgspec.Struct, forbid_unknown_fields=True, **config):
        progressToken: int | str | msgspec.UnsetType = msgspec.UNSET

    class Params(msgspec.Struct, forbid_unknown_fields=True, **config):
        name: str
        arguments: dict[str, typing.Any] | msgspec.UnsetType = msgspec.UNSET
        meta: Meta | msgspec.UnsetType = msgspec.field(
            default=msgspec.UNSET, name="_meta"
        )

    class Request(
        msgspec.Struct,
        forbid_unknown_fields=True,
        tag_field="method",
        tag="tools/call",
        **config,
    ):
        jsonrpc: Literal["2.0"]
        id: int | str
        params: Params

    return Request


class Never:
    """No JSON value decodes to this (the hook refuses it)."""


def refuse(tp: typing.Any, obj: typing.Any) -> typing.Any:
    raise ValueError("not a known tag")


def guarded(tp: type[msgspec.Struct]) -> typing.Any:
    guard = msgspec.defstruct(
        "Guard", [("never", Never)], tag_field="method", tag="\x00never"
    )
    return typing.Union[tp, guard]  # noqa: UP007


def wrapper(decode: typing.Callable[[bytes], typing.Any]) -> typing.Any:
    def codec_decode(data: bytes) -> typing.Any:
        try:
            return decode(data)
        except msgspec.ValidationError:
            raise  # the slow path (set unknown keys aside) would go here

    return codec_decode


def timed(fn: typing.Callable[[bytes], typing.Any], n: int = 5000) -> float:
    started = time.perf_counter()
    for _ in range(n):
        fn(RAW)
    return (time.perf_counter() - started) / n * 1e9


def main() -> None:
    lean = types(gc=False)
    roomy = types(dict=True)
    plain = msgspec.json.Decoder(types()).decode
    rows = {
        "plain Structs (the ceiling, tag not required)": plain,
        "+ gc=False (no unknown-key room possible)": msgspec.json.Decoder(lean).decode,
        "+ dict=True (room for unknown keys)": msgspec.json.Decoder(roomy).decode,
        "+ tag guard Union[T, Guard]": msgspec.json.Decoder(
            guarded(types()), dec_hook=refuse
        ).decode,
        "+ Python wrapper with try": wrapper(plain),
    }
    best = dict.fromkeys(rows, float("inf"))
    for _ in range(15):  # rounds alternate the contenders: a busy machine drifts
        for label, fn in rows.items():
            best[label] = min(best[label], timed(fn))
    baseline = best[next(iter(rows))]
    for label, ns in best.items():
        print(f"{label:50s} {ns:7.0f} ns  {ns - baseline:+5.0f}")
    # The tag is not required when a tagged Struct is decoded on its own:
    untagged = RAW.replace(b'"method":"tools/call",', b"")
    print("decoded without its tag:", type(plain(untagged)).__name__)


if __name__ == "__main__":
    main()
