"""The known, deliberate differences between the generated types and the schemas.

This is the ONE table of them. A disagreement between jsonschema and the codec
is explained only by an entry here; every other one fails
`test_agreement.py`. The table is strict, like `xfail_strict`: an entry that
no longer explains any disagreement fails `test_leniency_entry_is_exercised`,
so it has to be removed when the difference goes away.

Keys are `(revision, owner)`, both `fnmatch` patterns. The owner is the
generated struct that holds the property in question (the innermost struct on
the way to it), or the definition under test when there is none (a bare
alias such as `RequestId`). An entry explains a disagreement when its key
matches and the disagreement has exactly the entry's shape (see
`differential_engine.Finding`): e.g. a `default-added` entry for `resultType`
only explains an instance that the codec accepted without that property,
whose round trip adds exactly that one property with the value "complete",
and which jsonschema accepts once it is added.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from differential_engine import Finding, Outcome, analyse


@dataclass(frozen=True)
class Leniency:
    shape: str
    """`default-added`, `integral-float`, `fractional-number`,
    `not-json-schema`, `required-absent` or `result-type-decides` (see
    `Finding`); `tag-added` is no longer needed (the
    runtime now insists on the tag of a standalone struct)."""
    reason: str
    key: str | None = None
    """The property concerned (None: any)."""
    value: Any = None
    """The value the round trip adds (`default-added`); the properties that
    may be absent (`required-absent`)."""

    def matches(self, finding: Finding) -> bool:
        if finding.shape != self.shape:
            return False
        if self.key is not None and finding.key != self.key:
            return False
        if self.shape == "tag-added" and not finding.standalone:
            return False  # msgspec always checks the tag inside a union
        if self.shape == "required-absent":
            return set(finding.value) <= set(self.value)
        return self.shape != "default-added" or finding.value == self.value


MODERN_REVISIONS = ("2026-07-28", "draft")

RESULT_TYPES = (
    "CacheableResult",
    "CallToolResult",
    "CompleteResult",
    "DiscoverResult",
    "GetPromptResult",
    "ListPromptsResult",
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ListToolsResult",
    "PaginatedResult",
    "ReadResourceResult",
    "Result",
    "SubscriptionsListenResult",
)
"""Definitions with a `resultType` property, InputRequiredResult excepted
(test_agreement checks this list against the schemas)."""

_RESULT_TYPE_DEFAULT = Leniency(
    shape="default-added",
    key="resultType",
    value="complete",
    reason=(
        "schema/overrides/result-type-default.toml makes `resultType` optional "
        "with the Python default 'complete': the specification says a client "
        "MUST treat an absent resultType as 'complete' (results of servers of "
        "earlier revisions). "
        "jsonschema (original schema: required) rejects the instance; the codec "
        "accepts it and the round trip adds resultType='complete'. "
        "InputRequiredResult keeps it required."
    ),
)

_INTEGRAL_FLOAT = Leniency(
    shape="integral-float",
    reason=(
        "inherent to msgspec: JSON Schema's `integer` accepts any number with a "
        "zero fractional part (1.0, 1e16), but msgspec's `int` is strict and "
        "rejects a float; typing such fields `int | float` instead would accept "
        "1.5. jsonschema accepts, the codec rejects."
    ),
)

ELICIT_NUMBER_REVISIONS = ("2025-06-18", "2025-11-25", "2026-07-28", "draft")
"""Revisions whose `ElicitResult.content` values lack `number` upstream
(test_agreement checks this list against the schemas, and test_probes that
each revision's override is in force). One entry, `("*", "ElicitResult")`,
covers them all: the generated mutations reach a fractional answer in some
revisions only, as their seeds fall."""

_ELICIT_NUMBER = Leniency(
    shape="fractional-number",
    reason=(
        "schema/overrides/elicit-number-answers.toml adds `number` to the value "
        "types of "
        "`ElicitResult.content` (string|integer|boolean upstream): a form may ask "
        'for a NumberSchema of `"type": "number"`, and the official SDK clients '
        "answer 2.5. jsonschema (original schema) rejects a fractional value there; "
        "the codec accepts it and round-trips it unchanged."
    ),
)

_TOOL_SCHEMA_KEYWORDS = Leniency(
    shape="not-json-schema",
    reason=(
        "a strictness, not a leniency: schema/overrides/tool-schema-keywords.toml "
        "types "
        "`properties` (object) and `required` (array of strings) of "
        "`Tool.inputSchema`/`outputSchema`, which the schema text leaves among "
        "any other keys, so a tool's parameters read the same in every "
        'revision. jsonschema (original schema) accepts `"required": 7`; the '
        "codec rejects it, as JSON Schema 2020-12's meta-schema does."
    ),
)

_INPUT_REQUIRED_CONST = Leniency(
    shape="result-type-decides",
    key="resultType",
    reason=(
        "a strictness, not a leniency: schema/overrides/input-required-tag.toml "
        "makes `InputRequiredResult.resultType` the const 'input_required' (the "
        "specification's ResultType: input_required means an InputRequiredResult, "
        "complete the final content), and a result union decodes the member its "
        "resultType names. jsonschema (original schema: any string) also reads an "
        "InputRequiredResult with another resultType, or an input_required result "
        "as the complete type; the codec rejects both."
    ),
)

_READ_CACHE_HINTS = Leniency(
    shape="required-absent",
    value=("cacheScope", "ttlMs"),
    reason=(
        "schema/overrides/ttl-absent.toml lets ReadResourceResult lack `ttlMs` "
        "and `cacheScope` (the specification's own resources/read response "
        "example has neither; SEP-2549: earlier servers send none). jsonschema "
        "(original schema: required) rejects the instance; the codec accepts it, "
        "leaves them UNSET and round-trips it unchanged."
    ),
)

LENIENCIES: dict[tuple[str, str], Leniency] = {
    # 1. Absent resultType means "complete" (schema/overrides).
    **{
        (rev, name): _RESULT_TYPE_DEFAULT
        for rev in MODERN_REVISIONS
        for name in RESULT_TYPES
    },
    # 2. msgspec limitation: an integral float for an `integer`.
    ("*", "*"): _INTEGRAL_FLOAT,
    # 3. Fractional answers to elicitation (schema/overrides).
    ("*", "ElicitResult"): _ELICIT_NUMBER,
    # 4. Tool schemas: typed JSON Schema keywords (schema/overrides).
    **{(rev, "Tool*putSchema"): _TOOL_SCHEMA_KEYWORDS for rev in MODERN_REVISIONS},
    # 5. resultType names the member of a result union (schema/overrides).
    **{(rev, "*"): _INPUT_REQUIRED_CONST for rev in MODERN_REVISIONS},
    # 6. A read result may lack its cache hints (schema/overrides); the owner
    # pattern is spelled apart from entry 1's, which has the plain name.
    **{(rev, "[R]eadResourceResult"): _READ_CACHE_HINTS for rev in MODERN_REVISIONS},
}


def explaining(outcome: Outcome) -> list[tuple[str, str]]:
    """The keys of the entries that explain `outcome` (empty: unexplained)."""
    if not outcome.disagrees:
        return []
    finding = analyse(outcome)
    return [
        key
        for key, leniency in LENIENCIES.items()
        if fnmatchcase(outcome.revision, key[0])
        and fnmatchcase(finding.owner, key[1])
        and leniency.matches(finding)
    ]
