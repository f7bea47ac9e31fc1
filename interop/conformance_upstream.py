"""A test upstream MCP server offering everything the MCP conformance suite's server scenarios call.

Written on the Python SDK's low-level `Server` (mcp 2.3.0), so every answer has
exactly the shape the scenarios of `@modelcontextprotocol/conformance` check:
the `test_*` tools (text, image, audio, embedded resource, mixed content,
logging, progress, error, sampling, elicitation, SEP-1034 defaults, SEP-1330
enums, the JSON Schema 2020-12 tool, `test_reconnection`, and the 2026-07-28
diagnostic tools: `test_missing_capability`, `test_logging_tool`,
`test_streaming_elicitation` and the `input_required` ones of SEP-2322), the
`test://` resources and template, resource subscriptions, the `test_*` prompts
(`test_input_required_result_prompt` among them), completion and
`logging/setLevel`. Run it over stdio (the default), e.g. as an upstream of
`skillgraph serve`:

    python interop/conformance_upstream.py

or over streamable HTTP at `/mcp`, for `conformance server --url URL`:

    python interop/conformance_upstream.py --http 127.0.0.1:0

Port 0 picks a free port; once listening the server prints one line,
`conformance-upstream: listening on http://HOST:PORT/mcp`, to standard error.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import io
import itertools
import json
import secrets
import socket
import sys
import warnings
import wave
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import uvicorn
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import CLIENT_CAPABILITIES_META_KEY
from mcp_types.jsonrpc import INVALID_PARAMS, JSONRPCMessage

# Logging, sampling and client-to-server requests are deprecated in the
# 2026-07-28 revision, but the scenarios exercise them on the handshake era.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

Context = ServerRequestContext[Any, Any]
ToolHandler = Callable[[Context, dict[str, Any]], Awaitable[types.CallToolResult]]
Asked = types.CallToolResult | types.InputRequiredResult
AskingHandler = Callable[[Context, types.CallToolRequestParams], Asked]
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021

# A 1x1 red PNG and a tenth of a second of 8 kHz silence as 16-bit mono WAV.
PNG_PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def wav_silence() -> str:
    """Base64 of a short silent WAV file."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\0\0" * 800)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


WAV_SILENCE = wav_silence()
NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}
LOG_LEVELS: list[types.LoggingLevel] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


def text(value: str) -> types.TextContent:
    """A text content block."""
    return types.TextContent(type="text", text=value)


def image() -> types.ImageContent:
    """The one-pixel PNG as an image content block."""
    return types.ImageContent(type="image", data=PNG_PIXEL, mime_type="image/png")


def embedded(uri: str, mime_type: str, body: str) -> types.EmbeddedResource:
    """A text resource embedded in a result or a prompt message."""
    contents = types.TextResourceContents(uri=uri, mime_type=mime_type, text=body)
    return types.EmbeddedResource(type="resource", resource=contents)


def answer(*content: types.ContentBlock, is_error: bool = False) -> types.CallToolResult:
    """A tool result holding the given content blocks."""
    return types.CallToolResult(content=list(content), is_error=is_error)


class State:
    """What the server remembers between requests: the log threshold and the subscribed URIs.

    One threshold serves the whole process (the last `logging/setLevel` wins),
    which is enough for one client at a time.
    """

    def __init__(self) -> None:
        self.log_level: types.LoggingLevel = "debug"
        self.subscriptions: set[str] = set()

    async def log(self, ctx: Context, level: types.LoggingLevel, message: str) -> None:
        """Send a log notification on the request's stream, unless it is below the threshold."""
        if LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level):
            await ctx.session.send_log_message(
                level, message, logger="conformance-upstream", related_request_id=ctx.request_id
            )


STATE = State()
TOOLS: dict[str, tuple[types.Tool, ToolHandler]] = {}


def tool(name: str, description: str, schema: dict[str, Any] = NO_ARGUMENTS) -> Callable[[ToolHandler], ToolHandler]:
    """Register the decorated coroutine as the tool `name`."""

    def register(handler: ToolHandler) -> ToolHandler:
        TOOLS[name] = (types.Tool(name=name, description=description, input_schema=schema), handler)
        return handler

    return register


def client_can(ctx: Context, capability: types.ClientCapabilities) -> bool:
    """Whether the client declared the capability at initialization."""
    return ctx.session.check_client_capability(capability)


@tool("test_simple_text", "Answers with one fixed line of text.")
async def simple_text(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    return answer(text("This is a simple text response for testing."))


@tool("test_image_content", "Answers with a one-pixel PNG image.")
async def image_content(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    return answer(image())


@tool("test_audio_content", "Answers with a short silent WAV clip.")
async def audio_content(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    return answer(types.AudioContent(type="audio", data=WAV_SILENCE, mime_type="audio/wav"))


@tool("test_embedded_resource", "Answers with a plain-text resource embedded in the result.")
async def embedded_resource(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    return answer(embedded("test://embedded-resource", "text/plain", "This is an embedded resource content."))


@tool("test_multiple_content_types", "Answers with text, an image and an embedded JSON resource together.")
async def multiple_content_types(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    body = json.dumps({"test": "data", "value": 123}, separators=(",", ":"))
    return answer(
        text("Multiple content types test:"),
        image(),
        embedded("test://mixed-content-resource", "application/json", body),
    )


@tool("test_tool_with_logging", "Sends three info-level log messages while it runs.")
async def tool_with_logging(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    await STATE.log(ctx, "info", "Tool execution started")
    await anyio.sleep(0.05)
    await STATE.log(ctx, "info", "Tool processing data")
    await anyio.sleep(0.05)
    await STATE.log(ctx, "info", "Tool execution completed")
    return answer(text("Logged three messages while running."))


@tool("test_logging_tool", "Logs one line, which reaches only a client that asked for log messages.")
async def logging_tool(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    await STATE.log(ctx, "info", "Diagnostic trace logging activated")
    return answer(text("Logging evaluated"))


@tool("test_streaming_elicitation", "Reports progress on its response stream, then answers.")
async def streaming_elicitation(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    await ctx.session.report_progress(50, 100, "half way")
    return answer(text("Streaming complete"))


@tool("test_error_handling", "Always fails, answering with an error result.")
async def error_handling(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    return answer(text("This tool intentionally returns an error for testing"), is_error=True)


@tool("test_tool_with_progress", "Reports progress 0, 50 and 100 out of 100 when the caller asks for progress.")
async def tool_with_progress(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    for step, progress in enumerate((0, 50, 100)):
        if step:
            await anyio.sleep(0.05)
        await ctx.session.report_progress(progress, 100, f"{progress}% done")
    return answer(text("Finished after reporting progress."))


@tool(
    "test_sampling",
    "Asks the client's model to answer the given prompt and returns what it said.",
    {
        "type": "object",
        "properties": {"prompt": {"type": "string", "description": "What to ask the model."}},
        "required": ["prompt"],
    },
)
async def sampling(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    if not client_can(ctx, types.ClientCapabilities(sampling=types.SamplingCapability())):
        return answer(text("The client does not offer sampling."), is_error=True)
    message = types.SamplingMessage(role="user", content=text(str(arguments.get("prompt", ""))))
    result = await ctx.session.create_message([message], max_tokens=100, related_request_id=ctx.request_id)
    said = result.content.text if isinstance(result.content, types.TextContent) else result.content.model_dump_json()
    return answer(text(f"LLM response: {said}"))


async def elicit(ctx: Context, message: str, schema: dict[str, Any], prefix: str) -> types.CallToolResult:
    """Ask the client for a form, and answer with the action and content it gave back."""
    if not client_can(ctx, types.ClientCapabilities(elicitation=types.ElicitationCapability())):
        return answer(text("The client does not offer elicitation."), is_error=True)
    result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
    return answer(text(f"{prefix}: action={result.action}, content={json.dumps(result.content)}"))


@tool(
    "test_elicitation",
    "Asks the user, through the client, for a user name and an email address.",
    {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "What to tell the user."}},
        "required": ["message"],
    },
)
async def elicitation(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "The name to go by"},
            "email": {"type": "string", "description": "Where to reach the user"},
        },
        "required": ["username", "email"],
    }
    return await elicit(ctx, str(arguments.get("message", "")), schema, "User response")


@tool("test_elicitation_sep1034_defaults", "Asks the user for a form whose every field has a default (SEP-1034).")
async def elicitation_defaults(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Full name", "default": "John Doe"},
            "age": {"type": "integer", "description": "Age in years", "default": 30},
            "score": {"type": "number", "description": "Last score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "Account state",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Whether the account is checked", "default": True},
        },
    }
    return await elicit(ctx, "Check these details, or keep the defaults.", schema, "Elicitation completed")


@tool("test_elicitation_sep1330_enums", "Asks the user for a form using each enum style of SEP-1330.")
async def elicitation_enums(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Pick one", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "description": "Pick one, shown by title",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "description": "Pick one, titled the old way",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Pick any",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "description": "Pick any, shown by title",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    }
    return await elicit(ctx, "Make a choice in each field.", schema, "Elicitation completed")


@tool(
    "json_schema_2020_12_tool",
    "Takes a name and an address, described with JSON Schema 2020-12 keywords.",
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": False,
    },
)
async def json_schema_2020_12(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    return answer(text(f"Received {json.dumps(arguments, sort_keys=True)}"))


@tool("test_reconnection", "Closes its SSE stream before answering, so the client must reconnect to get the answer.")
async def reconnection(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
    """Close the POST stream (HTTP at 2025-11-25 and later only), then answer once the client has reconnected."""
    if ctx.close_sse_stream is not None:
        await ctx.close_sse_stream()
        await anyio.sleep(0.2)
    return answer(text("Answered after the stream was closed."))


STATIC_RESOURCES: dict[str, tuple[types.Resource, types.TextResourceContents | types.BlobResourceContents]] = {
    resource.uri: (resource, contents)
    for resource, contents in (
        (
            types.Resource(
                uri="test://static-text",
                name="static-text",
                description="A fixed line of plain text.",
                mime_type="text/plain",
            ),
            types.TextResourceContents(
                uri="test://static-text",
                mime_type="text/plain",
                text="This is the content of the static text resource.",
            ),
        ),
        (
            types.Resource(
                uri="test://static-binary",
                name="static-binary",
                description="A one-pixel PNG image.",
                mime_type="image/png",
            ),
            types.BlobResourceContents(uri="test://static-binary", mime_type="image/png", blob=PNG_PIXEL),
        ),
        (
            types.Resource(
                uri="test://watched-resource",
                name="watched-resource",
                description="A resource clients may subscribe to.",
                mime_type="text/plain",
            ),
            types.TextResourceContents(
                uri="test://watched-resource",
                mime_type="text/plain",
                text="This resource can be watched for updates.",
            ),
        ),
    )
}
TEMPLATE = types.ResourceTemplate(
    uri_template="test://template/{id}/data",
    name="template-data",
    description="JSON data for the ID in the URI.",
    mime_type="application/json",
)
TEMPLATE_PREFIX, TEMPLATE_SUFFIX = "test://template/", "/data"


# The 2026-07-28 scenarios' diagnostic tools (SEP-2322 `input_required`,
# SEP-2575 capabilities): each answers from its request's inputResponses,
# requestState and declared capabilities, as the suite's reference server does.
ASKING: dict[str, tuple[types.Tool, AskingHandler]] = {}
STATE_KEY = secrets.token_bytes(32)


def asking(name: str, description: str) -> Callable[[AskingHandler], AskingHandler]:
    """Register the decorated function as the tool `name`, given the whole request."""

    def register(handler: AskingHandler) -> AskingHandler:
        ASKING[name] = (types.Tool(name=name, description=description, input_schema=NO_ARGUMENTS), handler)
        return handler

    return register


def declared(ctx: Context, capability: str) -> bool:
    """Whether the client declared `capability`: with this request (2026-07-28), else at initialization."""
    per_request = (ctx.meta or {}).get(CLIENT_CAPABILITIES_META_KEY)
    if isinstance(per_request, dict):
        return per_request.get(capability) is not None
    return client_can(ctx, types.ClientCapabilities.model_validate({capability: {}}))


def answers(params: types.CallToolRequestParams | types.GetPromptRequestParams) -> dict[str, dict[str, Any]]:
    """The client's input responses as plain JSON objects, by key."""
    given = params.input_responses or {}
    return {
        key: value.model_dump(by_alias=True, exclude_none=True) if hasattr(value, "model_dump") else dict(value)
        for key, value in given.items()
    }


def elicit_request(message: str, field: str, kind: str = "string") -> dict[str, Any]:
    """An elicitation input request for one required field."""
    schema = {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}
    return {"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}}


def sampling_request(text_: str, max_tokens: int) -> dict[str, Any]:
    """A sampling input request for one user message."""
    messages = [{"role": "user", "content": {"type": "text", "text": text_}}]
    return {"method": "sampling/createMessage", "params": {"messages": messages, "maxTokens": max_tokens}}


ROOTS_REQUEST = {"method": "roots/list", "params": {}}


def ask(requests: dict[str, Any], state: str | None = None) -> types.InputRequiredResult:
    """An `input_required` answer asking for `requests`, with `state` to be given back."""
    body: dict[str, Any] = {"inputRequests": requests}
    if state is not None:
        body["requestState"] = state
    return types.InputRequiredResult.model_validate(body)


def plain_state(kind: str, **fields: Any) -> str:
    """A request state as readable JSON, a fresh nonce in it."""
    return json.dumps({"kind": kind, "nonce": secrets.token_hex(8), **fields})


def signed_state(kind: str) -> str:
    """A request state signed with this server's key."""
    data = json.dumps({"kind": kind, "nonce": secrets.token_hex(8)})
    tag = hmac.new(STATE_KEY, data.encode(), hashlib.sha256).hexdigest()
    return json.dumps({"data": data, "hmac": tag})


def verified_state(state: str) -> dict[str, Any] | None:
    """What a signed state holds, or None when it was not signed here."""
    try:
        signed = json.loads(state)
        data, tag = signed["data"], signed["hmac"]
        expected = hmac.new(STATE_KEY, data.encode(), hashlib.sha256).hexdigest()
        return json.loads(data) if hmac.compare_digest(tag, expected) else None
    except (ValueError, KeyError, TypeError):
        return None


def read_state(state: str | None) -> dict[str, Any]:
    """A readable request state, or nothing."""
    try:
        read = json.loads(state or "{}")
    except ValueError:
        return {}
    return read if isinstance(read, dict) else {}


def field(answer: dict[str, Any] | None, name: str) -> Any:
    """A field of an elicitation answer's content."""
    return ((answer or {}).get("content") or {}).get(name)


@asking("test_missing_capability", "Needs sampling: refused (-32021) for a client that did not declare it.")
def missing_capability(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
    if not declared(ctx, "sampling"):
        raise MCPError(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            "MissingRequiredClientCapabilityError",
            data={"requiredCapabilities": {"sampling": {}}},
        )
    return answer(text("Success"))


@asking("test_input_required_result_elicitation", "MRTR: asks for the user's name by elicitation.")
def ask_elicitation(ctx: Context, params: types.CallToolRequestParams) -> Asked:
    given = answers(params).get("user_name")
    if given:
        return answer(text(f"Hello, {field(given, 'name')}!"))
    return ask({"user_name": elicit_request("What is your name?", "name")})


@asking("test_input_required_result_sampling", "MRTR: asks for a sample.")
def ask_sampling(ctx: Context, params: types.CallToolRequestParams) -> Asked:
    given = answers(params).get("sample_request")
    if given:
        return answer(text(f"Sampling result: {(given.get('content') or {}).get('text', 'no response')}"))
    return ask({"sample_request": sampling_request("What is the capital of France?", 100)})


@asking("test_input_required_result_list_roots", "MRTR: asks for the client's roots.")
def ask_roots(ctx: Context, params: types.CallToolRequestParams) -> Asked:
    given = answers(params).get("roots_request")
    if given:
        return answer(text(f"Found {len(given.get('roots') or [])} root(s)"))
    return ask({"roots_request": ROOTS_REQUEST})


@asking("test_input_required_result_request_state", "MRTR: asks for a confirmation, with a request state.")
def ask_with_state(ctx: Context, params: types.CallToolRequestParams) -> Asked:
    given = answers(params).get("confirm")
    if read_state(params.request_state).get("kind") == "request-state" and field(given, "ok") is True:
        return answer(text("state-ok: requestState validated"))
    return ask({"confirm": elicit_request("Please confirm", "ok", "boolean")}, plain_state("request-state"))


@asking("test_input_required_result_multiple_inputs", "MRTR: asks for a name, a sample and the roots at once.")
def ask_several(ctx: Context, params: types.CallToolRequestParams) -> Asked:
    given = answers(params)
    if read_state(params.request_state).get("kind") == "multiple-inputs" and all(
        key in given for key in ("user_name", "greeting", "client_roots")
    ):
        greeting = (given["greeting"].get("content") or {}).get("text", "Hello there!")
        roots = len(given["client_roots"].get("roots") or [])
        return answer(text(f"Name: {field(given['user_name'], 'name')}; Greeting: {greeting}; Roots: {roots}"))
    requests = {
        "user_name": elicit_request("What is your name?", "name"),
        "greeting": sampling_request("Generate a greeting", 50),
        "client_roots": ROOTS_REQUEST,
    }
    return ask(requests, plain_state("multiple-inputs"))


@asking("test_input_required_result_multi_round", "MRTR: asks twice, a name then a colour.")
def ask_twice(ctx: Context, params: types.CallToolRequestParams) -> Asked:
    state, given = read_state(params.request_state), answers(params)
    if state.get("round") == 1 and "step1" in given:
        name = field(given["step1"], "name")
        return ask(
            {"step2": elicit_request("Step 2: What is your favorite color?", "color")},
            plain_state("multi-round", round=2, name=name),
        )
    if state.get("round") == 2 and "step2" in given:
        return answer(text(f"Multi-round complete for {state.get('name')} who likes {field(given['step2'], 'color')}"))
    return ask({"step1": elicit_request("Step 1: What is your name?", "name")}, plain_state("multi-round", round=1))


@asking("test_input_required_result_tampered_state", "MRTR: a signed request state, refused when altered.")
def ask_signed(ctx: Context, params: types.CallToolRequestParams) -> Asked:
    if params.request_state is not None:
        verified = verified_state(params.request_state)
        if verified is None:
            raise MCPError(INVALID_PARAMS, "requestState integrity check failed")
        if verified.get("kind") == "tamper-test" and "confirm" in answers(params):
            return answer(text("integrity-ok: state verified"))
    return ask({"confirm": elicit_request("Please confirm", "ok", "boolean")}, signed_state("tamper-test"))


@asking("test_input_required_result_capabilities", "MRTR: asks only for what the client declared.")
def ask_declared(ctx: Context, params: types.CallToolRequestParams) -> Asked:
    given = answers(params)
    if given:
        return answer(text(f"capabilities-ok: received {','.join(given)}"))
    requests: dict[str, Any] = {}
    if declared(ctx, "elicitation"):
        requests["elicit_input"] = elicit_request("Elicitation input", "value")
    if declared(ctx, "sampling"):
        requests["sample_input"] = sampling_request("Sample request", 50)
    if not requests:
        return answer(text("No supported capabilities declared"))
    return ask(requests, signed_state("capabilities-test"))


async def list_tools(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    tools = [listed for listed, _ in TOOLS.values()] + [listed for listed, _ in ASKING.values()]
    return types.ListToolsResult(tools=tools)


async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> Asked:
    """Run the named tool, or fail with invalid params for an unknown name."""
    if params.name in ASKING:
        _, asking_handler = ASKING[params.name]
        return asking_handler(ctx, params)
    if params.name not in TOOLS:
        raise MCPError(INVALID_PARAMS, f"Unknown tool: {params.name}")
    _, handler = TOOLS[params.name]
    return await handler(ctx, params.arguments or {})


async def list_resources(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[resource for resource, _ in STATIC_RESOURCES.values()])


async def list_resource_templates(
    ctx: Context, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=[TEMPLATE])


async def read_resource(ctx: Context, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    """Read a static resource, or the template's JSON for `test://template/{id}/data`."""
    uri = str(params.uri)
    if uri in STATIC_RESOURCES:
        return types.ReadResourceResult(contents=[STATIC_RESOURCES[uri][1]])
    ident = uri.removeprefix(TEMPLATE_PREFIX).removesuffix(TEMPLATE_SUFFIX)
    if uri.startswith(TEMPLATE_PREFIX) and uri.endswith(TEMPLATE_SUFFIX) and ident and "/" not in ident:
        body = json.dumps({"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"}, separators=(",", ":"))
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=body)]
        )
    raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}")


async def subscribe(ctx: Context, params: types.SubscribeRequestParams) -> types.EmptyResult:
    STATE.subscriptions.add(str(params.uri))
    return types.EmptyResult()


async def unsubscribe(ctx: Context, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    STATE.subscriptions.discard(str(params.uri))
    return types.EmptyResult()


def argument(name: str, description: str) -> types.PromptArgument:
    """A required prompt argument."""
    return types.PromptArgument(name=name, description=description, required=True)


PROMPTS = [
    types.Prompt(name="test_simple_prompt", description="A fixed prompt with no arguments."),
    types.Prompt(
        name="test_prompt_with_arguments",
        description="A prompt that quotes both of its arguments.",
        arguments=[argument("arg1", "The first value to quote"), argument("arg2", "The second value to quote")],
    ),
    types.Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt carrying an embedded resource at the given URI.",
        arguments=[argument("resourceUri", "The URI to give the embedded resource")],
    ),
    types.Prompt(name="test_prompt_with_image", description="A prompt carrying a one-pixel PNG image."),
    types.Prompt(name="test_input_required_result_prompt", description="MRTR: a prompt that asks for its context."),
]
ARG1_SUGGESTIONS = ["test", "testing", "tested", "paris", "park", "party"]


def user(content: types.ContentBlock) -> types.PromptMessage:
    """A prompt message from the user."""
    return types.PromptMessage(role="user", content=content)


async def list_prompts(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=PROMPTS)


async def get_prompt(
    ctx: Context, params: types.GetPromptRequestParams
) -> types.GetPromptResult | types.InputRequiredResult:
    arguments = params.arguments or {}
    match params.name:
        case "test_input_required_result_prompt":
            given = answers(params).get("user_context")
            if not given:
                return ask({"user_context": elicit_request("What context should the prompt use?", "context")})
            messages = [user(text(f"Prompt with context: {field(given, 'context')}"))]
        case "test_simple_prompt":
            messages = [user(text("This is a simple prompt for testing."))]
        case "test_prompt_with_arguments":
            quoted = f"arg1='{arguments.get('arg1', '')}', arg2='{arguments.get('arg2', '')}'"
            messages = [user(text(f"Prompt with arguments: {quoted}"))]
        case "test_prompt_with_embedded_resource":
            uri = arguments.get("resourceUri", "test://example-resource")
            messages = [
                user(embedded(uri, "text/plain", "Embedded resource content for testing.")),
                user(text("Please process the embedded resource above.")),
            ]
        case "test_prompt_with_image":
            messages = [user(image()), user(text("Please analyze the image above."))]
        case _:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {params.name}")
    return types.GetPromptResult(messages=messages)


async def complete(ctx: Context, params: types.CompleteRequestParams) -> types.CompleteResult:
    """Suggest values for `arg1` of `test_prompt_with_arguments` that start with what was typed."""
    ref, typed = params.ref, params.argument
    values: list[str] = []
    if isinstance(ref, types.PromptReference) and ref.name == "test_prompt_with_arguments" and typed.name == "arg1":
        values = [value for value in ARG1_SUGGESTIONS if value.startswith(typed.value)]
    return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))


async def set_logging_level(ctx: Context, params: types.SetLevelRequestParams) -> types.EmptyResult:
    STATE.log_level = params.level
    return types.EmptyResult()


def server() -> Server[Any]:
    """The low-level server with every handler the scenarios call."""
    return Server(
        "conformance-upstream",
        version="1.0.0",
        instructions="A test server answering every request of the MCP conformance server scenarios.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
        on_set_logging_level=set_logging_level,
    )


class MemoryEventStore(EventStore):
    """Keeps every SSE event in memory so a client can resume a stream with Last-Event-ID."""

    def __init__(self) -> None:
        self.events: list[tuple[EventId, StreamId, JSONRPCMessage | None]] = []
        self.ids = itertools.count(1)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = str(next(self.ids))
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        position = next((i for i, (event_id, _, _) in enumerate(self.events) if event_id == last_event_id), None)
        if position is None:
            return None
        stream_id = self.events[position][1]
        for event_id, stream, message in self.events[position + 1 :]:
            if stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


async def serve_stdio() -> None:
    """Serve one client over standard input and output."""
    app = server()
    async with stdio_server() as (read_stream, write_stream):
        await app.run(read_stream, write_stream, app.create_initialization_options())


async def serve_http(host: str, port: int) -> None:
    """Serve streamable HTTP at /mcp, announcing the address on standard error once it listens."""
    app = server().streamable_http_app(host=host, event_store=MemoryEventStore(), retry_interval=500)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family)
    http = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(http.serve, [sock])
        while not http.started:
            await anyio.sleep(0.01)
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{sock.getsockname()[1]}/mcp"
        print(f"conformance-upstream: listening on {url}", file=sys.stderr, flush=True)


def address(value: str) -> tuple[str, int]:
    """HOST:PORT (IPv6 hosts in brackets) as a host and a port number."""
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=address, metavar="HOST:PORT", help="serve streamable HTTP instead of stdio")
    options = parser.parse_args()
    if options.http is None:
        anyio.run(serve_stdio)
    else:
        anyio.run(serve_http, *options.http)


if __name__ == "__main__":
    main()
