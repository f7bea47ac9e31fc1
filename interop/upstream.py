"""The support desk's upstream MCP server, written on the Python SDK (mcp 2.3.0).

It answers the desk's tools from the canned data file that the Rust upstream
(`desk-upstream`) reads too, so `skillgraph serve` can be tried against an
upstream nobody here wrote the protocol side of. Run it over stdio:

    python interop/upstream.py [--data FILE]

FILE defaults to `upstream/data.json` under the working directory, which is
the map folder when `skillgraph serve` starts it. The file holds, per tool
name, `argument` (the one argument's name), `answers` (the argument's value
written as a string -> the answer object), `default` (the answer for any
other value, or null for an error answer) and `description`.

Every answer is one text block holding the compact JSON of the answer object.
With `--meta-out FILE` each call's `_meta`, as the server received it, is
appended to FILE as one JSON line (`{"tool": NAME, "meta": {...}}`), so a test
can see the trace context a caller put there.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent

# The data file names each tool's argument but not its type; the desk's order
# numbers are integers and every other argument is a string.
INTEGER_ARGUMENTS = frozenset({"order_id"})


def compact(value: Any) -> str:
    """The compact JSON text of an answer object."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def answer_for(tool: str, entry: dict[str, Any], value: Any) -> CallToolResult:
    """The canned answer of one call: the matching answer, else the default, else an error."""
    key = str(value)
    answer = entry["answers"].get(key, entry["default"])
    if answer is None:
        text = f"{tool}: nothing matches {entry['argument']} {key}"
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
    return CallToolResult(content=[TextContent(type="text", text=compact(answer))])


def canned_tool(tool: str, entry: dict[str, Any], meta_out: Path | None):
    """A function taking the tool's one argument, typed so the SDK writes its input schema.

    It takes the request's context too (the SDK hands it over by its type), to write down
    the `_meta` the call came with when `meta_out` names a file.
    """

    def call(ctx: Context, **arguments: Any) -> CallToolResult:
        if meta_out is not None:
            meta = ctx.request_context.meta or {}
            line = json.dumps({"tool": tool, "meta": dict(meta)}, default=str)
            with meta_out.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
        return answer_for(tool, entry, arguments[entry["argument"]])

    kind = int if entry["argument"] in INTEGER_ARGUMENTS else str
    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)
    parameter = inspect.Parameter(entry["argument"], inspect.Parameter.KEYWORD_ONLY, annotation=kind)
    call.__signature__ = inspect.Signature([context, parameter], return_annotation=CallToolResult)
    call.__annotations__ = {"ctx": Context, entry["argument"]: kind, "return": CallToolResult}
    call.__name__ = tool
    return call


def read_data(path: Path) -> dict[str, Any]:
    """The canned data, or exit 2 naming the file and the fix."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        sys.exit(f"upstream.py: cannot read the canned data {path}: {err}; pass --data FILE")
    shape = ("argument", "answers", "default")
    if not isinstance(data, dict) or not all(
        isinstance(entry, dict) and all(key in entry for key in shape) for entry in data.values()
    ):
        sys.exit(f"upstream.py: {path} must map each tool name to an object with {', '.join(shape)}")
    return data


def server(data: dict[str, Any], meta_out: Path | None) -> MCPServer:
    """An MCP server offering one canned tool per entry of the data."""
    desk = MCPServer("desk-upstream-python", log_level="WARNING")
    for tool, entry in data.items():
        desk.add_tool(canned_tool(tool, entry, meta_out), name=tool, description=entry.get("description", ""))
    return desk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("upstream/data.json"), help="the canned data file")
    parser.add_argument("--meta-out", type=Path, default=None, help="append each call's _meta to this file")
    args = parser.parse_args()
    server(read_data(args.data), args.meta_out).run("stdio")


if __name__ == "__main__":
    main()
