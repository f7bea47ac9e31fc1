"""Calls one upstream tool through `skillgraph serve`, as a Python SDK client (mcp 2.3.0).

    python interop/through.py --tool NAME --args JSON --contains TEXT [--meta JSON] [--mode legacy|auto] [--http] -- COMMAND [ARG...]

For a real server from a registry behind `serve` (mcp-server-time,
server-everything): COMMAND is `skillgraph serve MAP`, whose entry skill
carries the server's tools (`allowed-tools: mcp__SERVER__*`). Checked: the
tool is listed; calling it with the JSON arguments answers without isError
and with TEXT in its text; on the sessionless generation the answer carries
`resultType`; the upstream's resources and prompts, when it has any, are
listed (and one of each read or got) through `serve` beside its own. With `--http` COMMAND is started
with `--http 127.0.0.1:0` added and spoken to over streamable HTTP. With `--meta` the call carries
that JSON object as its `_meta` (W3C trace context, say).

Prints one line per step, `ok  step: detail` or `FAIL step: ...`, and exits
1 when any step failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
from mcp import Client, MCPError, StdioServerParameters

from client import start_http


async def scenario(args: argparse.Namespace, server: Any) -> int:
    failures = 0

    def verdict(step: str, ok: bool, detail: str) -> None:
        nonlocal failures
        if not ok:
            failures += 1
        print(f"{'ok ' if ok else 'FAIL'} {step}: {detail}", flush=True)

    client = Client(server, mode=args.mode, cache=None, read_timeout_seconds=args.timeout)
    try:
        with anyio.fail_after(args.timeout * 6):
            async with client:
                names = sorted(tool.name for tool in (await client.list_tools()).tools)
                verdict("tools/list", args.tool in names, ", ".join(names))
                meta = json.loads(args.meta) if args.meta else None
                result = await client.call_tool(args.tool, json.loads(args.args), meta=meta)
                text = " ".join(block.text for block in result.content if block.type == "text")
                verdict(
                    f"tools/call {args.tool}",
                    not result.is_error and args.contains in text,
                    text[:160].replace("\n", " "),
                )
                if args.resources:
                    resources = [r.uri for r in (await client.list_resources()).resources]
                    upstream = [str(uri) for uri in resources if not str(uri).startswith("skillgraph://")]
                    verdict("resources/list", bool(upstream), f"{len(upstream)} upstream resources beside the record")
                    read = await client.read_resource(upstream[0]) if upstream else None
                    verdict("resources/read", read is not None and bool(read.contents), f"{upstream[:1]}")
                if args.prompts:
                    listed = (await client.list_prompts()).prompts
                    verdict("prompts/list", bool(listed), ", ".join(p.name for p in listed))
                    bare = [p.name for p in listed if not any(a.required for a in p.arguments or [])]
                    got = await client.get_prompt(bare[0]) if bare else None
                    verdict("prompts/get", got is not None and bool(got.messages), f"{bare[:1]}: {len(got.messages) if got else 0} messages")
    except MCPError as err:
        verdict("the session", False, f"the error {err}")
    except Exception as err:  # the connection broke
        verdict("the session", False, f"{type(err).__name__}: {err}")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True, help="the upstream tool to call")
    parser.add_argument("--args", default="{}", help="its arguments, as JSON")
    parser.add_argument("--contains", default="", help="text the answer must hold")
    parser.add_argument("--meta", default="", help="the call's _meta, as a JSON object")
    parser.add_argument("--resources", action="store_true", help="also list and read the upstream's resources")
    parser.add_argument("--prompts", action="store_true", help="also list the upstream's prompts")
    parser.add_argument("--mode", choices=["legacy", "auto"], default="auto")
    parser.add_argument("--http", action="store_true", help="serve over HTTP on a free port")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("command", nargs="+", help="the server's command line, after --")
    args = parser.parse_args()
    child = None
    server: Any = StdioServerParameters(command=args.command[0], args=args.command[1:])
    if args.http:
        child, server = start_http(args.command, args.timeout)
    try:
        failures = anyio.run(scenario, args, server)
    finally:
        if child is not None:
            child.terminate()
            child.wait(args.timeout)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
