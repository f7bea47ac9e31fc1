"""Runs the support desk scenario against `skillgraph serve` as a FastMCP client (fastmcp 4.2).

    python interop/fastmcp_client.py [--mode legacy|auto] [--http] [--timeout SECS] -- COMMAND [ARG...]

COMMAND is started as a child process and spoken to over stdio; with
`--http`, it is started with `--http 127.0.0.1:0` added, and spoken to over
streamable HTTP at the address it says on standard error. The scenario, on
either generation (`--mode legacy`: the initialize handshake; `auto`,
FastMCP's default: the 2026-07-28 revision): the instructions carry
triage's body; tools/list holds read_skill and lookup_order; lookup_order
4412 answers with the canned answer and then refunds' body (over HTTP on
the sessionless generation the answer gives the run handle, passed as
`skillgraph_run` after it); issue_refund is then accepted in that run; the
run's record holds the move by route.

Prints one line per step, `ok  step: detail` or `FAIL step: expected ..., got ...`,
and exits 1 when any step failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from client import start_http

RISKY_ORDER = {"order_id": 4412}


class Failed(Exception):
    """One step's check failed: what it expected and what came."""

    def __init__(self, expected: str, got: Any):
        super().__init__(f"expected {expected}, got {got!r}")


def expect(condition: bool, expected: str, got: Any) -> None:
    if not condition:
        raise Failed(expected, got)


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content if getattr(block, "type", "") == "text"]


class Scenario:
    """The steps, and the run handle once an answer gave one."""

    def __init__(self, client: Client, http: bool, sessionless: bool) -> None:
        self.client = client
        self.http = http
        self.sessionless = sessionless
        self.handle: str | None = None

    def arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return dict(arguments) if self.handle is None else {**arguments, "skillgraph_run": self.handle}

    async def instructions(self) -> str:
        instructions = self.client.instructions or ""
        marker = '<skill_content name="triage">'
        expect(marker in instructions, f"instructions holding {marker}", instructions[:200])
        return f"instructions carry triage's body ({len(instructions)} characters)"

    async def listed(self) -> str:
        names = {tool.name for tool in await self.client.list_tools()}
        expect({"read_skill", "lookup_order"} <= names, "read_skill and lookup_order listed", sorted(names))
        return ", ".join(sorted(names))

    async def routed(self) -> str:
        result = await self.client.call_tool("lookup_order", self.arguments(RISKY_ORDER), raise_on_error=False)
        blocks = texts(result)
        expect(not result.is_error and blocks, "a text answer without isError", blocks)
        answer = json.loads(blocks[0])
        expect(answer.get("riskLevel") == "high", "the canned answer for order 4412", answer)
        expect(any('<skill_content name="refunds">' in block for block in blocks), "refunds' body after the answer", blocks[1:])
        if self.http and self.sessionless:
            given = (result.meta or {}).get("skillgraph/run")
            expect(isinstance(given, str) and given.startswith("run_"), "the run handle in _meta", result.meta)
            self.handle = given
            return f"canned answer, then refunds' body; the run is {given[:8]}..."
        return "canned answer, then refunds' body"

    async def refund(self) -> str:
        result = await self.client.call_tool("issue_refund", self.arguments(RISKY_ORDER), raise_on_error=False)
        expect(not result.is_error, "issue_refund accepted in refunds", texts(result))
        return "issue_refund accepted after the move"

    async def record(self) -> str:
        uri = f"skillgraph://record/{self.handle}" if self.handle else "skillgraph://record"
        contents = await self.client.read_resource(uri)
        text = "".join(getattr(content, "text", "") for content in contents)
        events = [json.loads(line) for line in text.splitlines()]
        moved = [e for e in events if e.get("event") == "move" and e.get("to") == "refunds" and e.get("by") == "route"]
        expect(bool(moved), "a move to refunds by route", [e.get("event") for e in events])
        return f"{len(events)} events, the move to refunds by route among them"


async def run(args: argparse.Namespace, target: Any) -> int:
    failures = 0
    client = Client(target, mode=args.mode, timeout=args.timeout)
    step = "connect"
    try:
        with anyio.fail_after(args.timeout * 8):
            async with client:
                scenario = Scenario(client, args.http, args.mode == "auto")
                for step, check in [
                    ("instructions", scenario.instructions),
                    ("tools/list", scenario.listed),
                    ("tools/call lookup_order", scenario.routed),
                    ("tools/call issue_refund", scenario.refund),
                    ("resources/read the record", scenario.record),
                ]:
                    try:
                        print(f"ok  {step}: {await check()}", flush=True)
                    except Failed as failed:
                        failures += 1
                        print(f"FAIL {step}: {failed}", flush=True)
    except Exception as err:  # the connection broke: the step it broke in fails
        failures += 1
        print(f"FAIL {step}: expected an answer, got {type(err).__name__}: {err}", flush=True)
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["legacy", "auto"], default="auto", help="auto: FastMCP's default, the sessionless revision; legacy: the initialize handshake")
    parser.add_argument("--http", action="store_true", help="start the server with --http 127.0.0.1:0 and speak streamable HTTP to it")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for each answer (default 30)")
    parser.add_argument("command", nargs="+", help="the server's command line, after --")
    args = parser.parse_args()
    child = None
    if args.http:
        child, target = start_http(args.command, args.timeout)
    else:
        target = StdioTransport(command=args.command[0], args=args.command[1:])
    try:
        failures = anyio.run(run, args, target)
    finally:
        if child is not None:
            child.terminate()
            child.wait(args.timeout)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
