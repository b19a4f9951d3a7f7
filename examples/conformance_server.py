"""The fixture server of the official MCP conformance suites, on `App`.

    python examples/conformance_server.py --port 3000     # http://127.0.0.1:3000/mcp

Every tool, resource and prompt the suites call, with the exact texts they
check (the reference is the suites' own "everything server"), served in every
protocol revision on one Streamable HTTP endpoint: the 2025 scenarios run over
an `initialize` session, the 2026-07-28 ones statelessly, where asking the
client for input takes `InputRequiredResult` rounds (`Context.elicit`,
`sample`, `list_roots` and `ask_many`, each question under the key the suite
expects). Measure it with `python -m benchmarks.conformance URL`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from mcp_specgen_runtime.app import App, Context
from mcp_specgen_runtime.app.context import elicit_params, sample_params
from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_runtime.transports.http.server import close_sse_stream

IMAGE = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8"
    "jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 red PNG, base64."""

AUDIO = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
"""A minimal WAV file, base64."""

NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
"""The hand-written inputSchema of `json_schema_2020_12_tool` (SEP-1613)."""

SEP1034_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {
            "type": "boolean",
            "description": "Verification status",
            "default": True,
        },
    },
    "required": [],
}


def _titled(values: list[str], titles: list[str]) -> list[dict[str, str]]:
    return [{"const": v, "title": t} for v, t in zip(values, titles, strict=True)]


OPTIONS = ["option1", "option2", "option3"]
VALUES = ["value1", "value2", "value3"]
SEP1330_SCHEMA = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": OPTIONS,
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": _titled(VALUES, ["First Option", "Second Option", "Third Option"]),
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": OPTIONS},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": _titled(
                    VALUES, ["First Choice", "Second Choice", "Third Choice"]
                )
            },
        },
    },
    "required": [],
}


def text_of(sampled: dict[str, Any]) -> str:
    """The text of a `CreateMessageResult`."""
    content = sampled.get("content")
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return str(content["text"])
    return "No response"


def user_text(text: str) -> dict[str, Any]:
    """A user message holding `text`."""
    return {"role": "user", "content": {"type": "text", "text": text}}


def elicited(result: dict[str, Any]) -> str:
    """`action=..., content=...` of an `ElicitResult`."""
    content = json.dumps(result.get("content") or {}, separators=(",", ":"))
    return f"action={result.get('action')}, content={content}"


app = App("mcp-conformance-test-server", version="1.0.0", subscriptions=True)


# --- content ---------------------------------------------------------------------


@app.tool()
async def test_reconnection() -> str:
    """Tests SSE polling: the server closes the stream's connection mid-call
    and the client resumes it with Last-Event-ID (SEP-1699)"""
    close_sse_stream()
    await asyncio.sleep(0.2)  # the result is sent once the connection is gone
    return "Reconnection test completed"


@app.tool()
def test_simple_text() -> str:
    """Tests simple text content response"""
    return "This is a simple text response for testing."


@app.tool(headers={"region": "Region"})
def test_custom_header(region: str, query: str = "") -> str:
    """Tests a parameter mirrored into the Mcp-Param-Region header (2026)"""
    return f"{region}: {query}"


@app.tool()
def test_image_content() -> dict[str, Any]:
    """Tests image content response"""
    return {"type": "image", "data": IMAGE, "mimeType": "image/png"}


@app.tool()
def test_audio_content() -> dict[str, Any]:
    """Tests audio content response"""
    return {"type": "audio", "data": AUDIO, "mimeType": "audio/wav"}


@app.tool()
def test_embedded_resource() -> dict[str, Any]:
    """Tests embedded resource content response"""
    resource = {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }
    return {"type": "resource", "resource": resource}


@app.tool()
def test_multiple_content_types() -> list[dict[str, Any]]:
    """Tests response with multiple content types (text, image, resource)"""
    resource = {
        "uri": "test://mixed-content-resource",
        "mimeType": "application/json",
        "text": json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
    }
    return [
        {"type": "text", "text": "Multiple content types test:"},
        {"type": "image", "data": IMAGE, "mimeType": "image/png"},
        {"type": "resource", "resource": resource},
    ]


@app.tool()
def test_error_handling() -> str:
    """Tests error response handling"""
    raise RuntimeError("This tool intentionally returns an error for testing")


@app.tool(input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(
    name: str | None = None,
    address: dict[str, Any] | None = None,
    contactMethod: str | None = None,
    phone: str | None = None,
    email: str | None = None,
) -> str:
    """Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)"""
    given = {
        key: value
        for key, value in {
            "name": name,
            "address": address,
            "contactMethod": contactMethod,
            "phone": phone,
            "email": email,
        }.items()
        if value is not None
    }
    return f"JSON Schema 2020-12 tool called with: {json.dumps(given)}"


# --- notifications ------------------------------------------------------------------


@app.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Tests tool that emits log messages during execution"""
    for text in ("Tool execution started", "Tool processing data"):
        await ctx.info(text)
        await asyncio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@app.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Tests tool that reports progress notifications"""
    for step in (0, 50):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        await asyncio.sleep(0.05)
    await ctx.report_progress(100, 100, "Completed step 100 of 100")
    return "Progress reported: 0, 50, 100 of 100"


@app.tool()
async def test_logging_tool(ctx: Context) -> str:
    """Logs a message, sent only when the request names a log level (2026)"""
    sent = await ctx.info("test_logging_tool ran")
    return f"Logged: {sent}"


# --- asking the client -------------------------------------------------------------


@app.tool()
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Tests server-initiated sampling (LLM completion request)"""
    sampled = await ctx.sample([user_text(prompt)], max_tokens=100)
    return f"LLM response: {text_of(sampled)}"


@app.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Tests server-initiated elicitation (user input request)"""
    schema = {
        "type": "object",
        "properties": {
            "response": {"type": "string", "description": "User's response"}
        },
        "required": ["response"],
    }
    return f"User response: {elicited(await ctx.elicit(message, schema))}"


@app.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Tests elicitation with default values per SEP-1034"""
    message = "Please review and update the form fields with defaults"
    result = await ctx.elicit(message, SEP1034_SCHEMA)
    return f"Elicitation completed: {elicited(result)}"


@app.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Tests elicitation with enum schema improvements per SEP-1330"""
    message = "Please select options from the enum fields"
    result = await ctx.elicit(message, SEP1330_SCHEMA)
    return f"Elicitation completed: {elicited(result)}"


@app.tool()
async def test_streaming_elicitation(ctx: Context) -> str:
    """Reports progress, then asks the user to confirm (2026: as an
    InputRequiredResult on the response stream, never a request)"""
    await ctx.report_progress(0, 1, "asking")
    result = await ctx.elicit("Please confirm", CONFIRM_SCHEMA, key="confirm")
    return f"Confirmed: {elicited(result)}"


@app.tool()
def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability (-32021 without it)"""
    ctx.require_capabilities("sampling")
    return "Success"


# --- 2026-07-28 tasks extension (SEP-2663): the tasks-* scenarios ---------------


@app.tool()
def greet(name: str) -> str:
    """Greets by name (never a task)"""
    return f"Hello, {name}!"


@app.tool(task_support="optional")
async def slow_compute(seconds: float, label: str = "") -> str:
    """Sleeps `seconds`, then answers (a task for clients of the extension;
    cancellable)"""
    await asyncio.sleep(seconds)
    return f"Computed {label or 'result'} after {seconds:g}s"


@app.tool(task_support="required")
async def failing_job() -> str:
    """Fails with a tool execution error after about a second"""
    await asyncio.sleep(1)
    raise RuntimeError("the job failed")


@app.tool(task_support="optional")
async def protocol_error_job() -> str:
    """Fails with a JSON-RPC error (the task ends `failed`)"""
    raise RpcError(ErrorCode.INTERNAL_ERROR, "the job crashed")


@app.tool(task_support="optional")
async def confirm_delete(filename: str, ctx: Context) -> str:
    """Asks the user to confirm, then 'deletes' the file"""
    schema = {
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}},
        "required": ["confirm"],
    }
    result = await ctx.elicit(f"Delete {filename}?", schema)
    confirmed = (result.get("content") or {}).get("confirm") is True
    accepted = result.get("action") == "accept" and confirmed
    return f"Deleted {filename}" if accepted else f"Kept {filename}"


@app.tool(task_support="optional")
async def multi_input(ctx: Context) -> str:
    """Asks two questions at once (two input requests pending together)"""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    answers = await ctx.ask_many(
        {
            "first": ("elicitation/create", elicit_params("First?", schema)),
            "second": ("elicitation/create", elicit_params("Second?", schema)),
        }
    )
    names = [(a.get("content") or {}).get("name") for a in answers.values()]
    return f"Got {names[0]} and {names[1]}"


@app.tool(task_support="required", task_start="explicit")
async def test_tool_with_task(ctx: Context) -> str:
    """Asks the user's name in an InputRequiredResult round, then becomes a
    task that greets them"""
    result = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    await ctx.start_task()
    name = (result.get("content") or {}).get("name")
    await asyncio.sleep(0.1)
    return f"Hello, {name}!"


# --- 2026-07-28 InputRequiredResult rounds (SEP-2322) ------------------------------


@app.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the user's name in an InputRequiredResult round"""
    result = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    return f"Hello, {(result.get('content') or {}).get('name')}!"


@app.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question in an InputRequiredResult round"""
    question = [user_text("What is the capital of France?")]
    sampled = await ctx.sample(question, max_tokens=100, key="capital_question")
    return f"LLM response: {text_of(sampled)}"


@app.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks the client's roots in an InputRequiredResult round"""
    roots = await ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(str(root.get("uri")) for root in roots)


@app.tool()
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Asks for a confirmation; the sealed requestState carries the round"""
    ctx.state = {"round": 1}
    result = await ctx.elicit("Please confirm", CONFIRM_SCHEMA, key="confirm")
    verdict = "state-ok" if ctx.state == {"round": 1} else "state-missing"
    return f"{verdict}: {elicited(result)}"


@app.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks for a name, a greeting and the roots in one round"""
    answers = await ctx.ask_many(
        {
            "user_name": (
                "elicitation/create",
                elicit_params("What is your name?", NAME_SCHEMA),
            ),
            "greeting": (
                "sampling/createMessage",
                sample_params([user_text("Generate a greeting")], 50),
            ),
            "client_roots": ("roots/list", {}),
        }
    )
    name = (answers["user_name"].get("content") or {}).get("name")
    roots = len(answers["client_roots"].get("roots", []))
    return f"{text_of(answers['greeting'])} {name} ({roots} roots)"


@app.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Asks for a name, then a colour, in two rounds"""
    first = await ctx.elicit("Step 1: What is your name?", NAME_SCHEMA, key="step1")
    color_schema = {
        "type": "object",
        "properties": {"color": {"type": "string"}},
        "required": ["color"],
    }
    second = await ctx.elicit(
        "Step 2: What is your favorite color?", color_schema, key="step2"
    )
    name = (first.get("content") or {}).get("name")
    color = (second.get("content") or {}).get("color")
    return f"{name} likes {color}"


@app.tool()
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Asks for a confirmation; a tampered requestState is refused (-32602)"""
    result = await ctx.elicit("Please confirm", CONFIRM_SCHEMA, key="confirm")
    return f"Confirmed: {elicited(result)}"


@app.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only what the client can answer (its declared capabilities)"""
    declared = ctx.client_capabilities
    questions: dict[str, tuple[str, dict[str, Any]]] = {}
    if "elicitation" in declared:
        questions["user_name"] = (
            "elicitation/create",
            elicit_params("What is your name?", NAME_SCHEMA),
        )
    if "sampling" in declared:
        questions["greeting"] = (
            "sampling/createMessage",
            sample_params([user_text("Generate a greeting")], 50),
        )
    if "roots" in declared:
        questions["client_roots"] = ("roots/list", {})
    answers = await ctx.ask_many(questions) if questions else {}
    return f"Answered: {', '.join(sorted(answers)) or 'nothing'}"


# --- resources --------------------------------------------------------------------


@app.resource(
    "test://static-text",
    name="static-text",
    title="Static Text Resource",
    description="A static text resource for testing",
    mime_type="text/plain",
)
def static_text() -> str:
    return "This is the content of the static text resource."


@app.resource(
    "test://static-binary",
    name="static-binary",
    title="Static Binary Resource",
    description="A static binary resource (image) for testing",
    mime_type="image/png",
)
def static_binary() -> dict[str, Any]:
    return {"mimeType": "image/png", "blob": IMAGE}


@app.resource(
    "test://template/{id}/data",
    name="template",
    title="Resource Template",
    description="A resource template with parameter substitution",
    mime_type="application/json",
)
def template(id: str) -> str:
    payload = {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}
    return json.dumps(payload, separators=(",", ":"))


@app.resource(
    "test://watched-resource",
    name="watched-resource",
    title="Watched Resource",
    description="A resource that auto-updates every 3 seconds",
    mime_type="text/plain",
)
def watched_resource() -> str:
    return "Watched resource content"


# --- prompts ----------------------------------------------------------------------


@app.prompt(title="Simple Test Prompt")
def test_simple_prompt() -> str:
    """A simple prompt without arguments"""
    return "This is a simple prompt for testing."


@app.prompt(
    title="Prompt With Arguments",
    arguments={"arg1": "First test argument", "arg2": "Second test argument"},
)
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with required arguments"""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@app.prompt(
    title="Prompt With Embedded Resource",
    arguments={"resourceUri": "URI of the resource to embed"},
)
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:
    """A prompt that includes an embedded resource"""
    resource = {
        "uri": resourceUri,
        "mimeType": "text/plain",
        "text": "Embedded resource content for testing.",
    }
    return [
        {"role": "user", "content": {"type": "resource", "resource": resource}},
        "Please process the embedded resource above.",
    ]


@app.prompt(title="Prompt With Image")
def test_prompt_with_image() -> list[Any]:
    """A prompt that includes image content"""
    image = {"type": "image", "data": IMAGE, "mimeType": "image/png"}
    return [{"role": "user", "content": image}, "Please analyze the image above."]


@app.prompt(title="Prompt Asking For Context")
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that asks the user for its context first"""
    schema = {
        "type": "object",
        "properties": {"context": {"type": "string"}},
        "required": ["context"],
    }
    result = await ctx.elicit(
        "What context should the prompt use?", schema, key="user_context"
    )
    context = (result.get("content") or {}).get("context")
    return f"Use this context: {context}"


@app.completion()
def complete(
    ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]
) -> list[str]:
    """Suggestions for prompt arguments and template variables."""
    prefix = str(argument.get("value", ""))
    candidates = ["alpha", "beta", "gamma"] if ref.get("type") == "ref/prompt" else []
    if ref.get("type") == "ref/resource":
        candidates = ["1", "2", "123"]
    return [value for value in candidates if value.startswith(prefix)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3000)
    args = parser.parse_args(argv)
    app.run("http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
