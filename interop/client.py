"""Runs the support desk scenario against an MCP server, as a Python SDK client (mcp 2.3.0).

    python interop/client.py [--mode legacy|auto] [--http] [--map DIR] [--timeout SECS] -- COMMAND [ARG...]
    python interop/client.py --upstream-only -- COMMAND [ARG...]

COMMAND is started as a child process and spoken to over stdio; with
`--http`, it is started with `--http 127.0.0.1:0` added, and spoken to over
streamable HTTP at the address it says on standard error. Over HTTP on the
sessionless revision the run is named by the handle its first answer gave
(`_meta["skillgraph/run"]`), passed as `skillgraph_run` in later calls, and
its record is `skillgraph://record/RUN` (SPEC §9.4). With
`--mode legacy` (the default) the client uses the initialize handshake; the
scenario (on `skillgraph serve` over the support desk): the instructions
carry triage's body; tools/list offers triage's tools; lookup_order 4412
routes to refunds, appending refunds' body and announcing the change with
notifications/tools/list_changed; issue_refund is offered then; the record
resource holds the move by route. With `--mode auto` (the SDK's default: it
probes server/discover and speaks the 2026-07-28 revision) the scenario is
the sessionless one (SPEC §9.2, §9.3): one tools/list for every request,
holding every tool some skill carries; issue_refund refused from triage with
the run's position; lookup_order routing to refunds; the same list after the
move; the record's start under the strict policy. `--upstream-only` checks a
bare upstream instead: tools/list and one lookup_order call.

Prints one line per step, `ok  step: detail` or `FAIL step: expected ..., got ...`,
and exits 1 when any step failed.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import CallToolResult, ToolListChangedNotification

TRIAGE_TOOLS = {"read_skill", "list_skills", "lookup_order", "lookup_invoice", "track_parcel"}
RISKY_ORDER = {"order_id": 4412}


class Run:
    """The run handle over HTTP: taken from the first answer that gives one."""

    def __init__(self, http: bool) -> None:
        self.http = http
        self.handle: str | None = None

    def arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.handle is None:
            return dict(arguments)
        return {**arguments, "skillgraph_run": self.handle}

    def take(self, result: CallToolResult) -> None:
        given = (result.meta or {}).get("skillgraph/run")
        if self.http and self.handle is None:
            expect(isinstance(given, str) and given.startswith("run_"), "a run handle in _meta under skillgraph/run", result.meta)
            expect(any(given in block for block in texts(result)), "a last text block naming the handle", texts(result))
            self.handle = given

    def record_uri(self) -> str:
        return f"skillgraph://record/{self.handle}" if self.http and self.handle else "skillgraph://record"


RUN = Run(False)


class Failed(Exception):
    """One step's check failed: what it expected and what came."""

    def __init__(self, expected: str, got: Any):
        super().__init__(f"expected {expected}, got {got!r}")


class Steps:
    """Prints each step's verdict and remembers whether any failed."""

    def __init__(self) -> None:
        self.failures = 0

    def ok(self, step: str, detail: str) -> None:
        print(f"ok  {step}: {detail}", flush=True)

    def fail(self, step: str, why: BaseException) -> None:
        self.failures += 1
        print(f"FAIL {step}: {why}", flush=True)


def expect(condition: bool, expected: str, got: Any) -> None:
    if not condition:
        raise Failed(expected, got)


def texts(result: CallToolResult) -> list[str]:
    """The text of each text block of an answer, in order."""
    return [block.text for block in result.content if block.type == "text"]


def check_risky_order(result: CallToolResult) -> dict[str, Any]:
    """The first block is the upstream's canned answer for order 4412."""
    blocks = texts(result)
    expect(not result.is_error and bool(blocks), "a text answer without isError", result)
    try:
        answer = json.loads(blocks[0])
    except ValueError:
        raise Failed("the canned answer's JSON as the first block", blocks[0]) from None
    wanted = {"status": "success", "riskLevel": "high", "amount": 240}
    got = {key: answer.get(key) for key in wanted} if isinstance(answer, dict) else answer
    expect(got == wanted, json.dumps(wanted), got)
    return answer


def triage_body(map_dir: Path) -> str:
    """The first line of triage's body, after its front matter."""
    text = (map_dir / "skills" / "triage" / "SKILL.md").read_text(encoding="utf-8")
    body = text.split("---", 2)[2] if text.startswith("---") else text
    return next(line for line in body.splitlines() if line.strip())


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


async def initialize(client: Client, map_dir: Path | None) -> str:
    instructions = client.instructions or ""
    marker = '<skill_content name="triage">'
    expect(marker in instructions, f"instructions holding {marker}", instructions[:200])
    if map_dir is not None:
        line = triage_body(map_dir)
        expect(line in instructions, f"instructions holding triage's body ({line!r})", instructions[:200])
    return f"instructions carry triage's body ({len(instructions)} characters)"


async def first_list(client: Client) -> str:
    names = await tool_names(client)
    expect(names == TRIAGE_TOOLS, f"exactly {sorted(TRIAGE_TOOLS)}", sorted(names))
    return ", ".join(sorted(names))


async def risky_call(client: Client, changed: anyio.Event, timeout: float) -> str:
    result = await client.call_tool("lookup_order", RISKY_ORDER)
    check_risky_order(result)
    blocks = texts(result)
    marker = '<skill_content name="refunds">'
    expect(len(blocks) >= 2 and marker in blocks[-1], f"a last text block holding {marker}", blocks[1:])
    with anyio.move_on_after(timeout):
        await changed.wait()
    expect(changed.is_set(), f"notifications/tools/list_changed within {timeout}s", "none")
    return "canned answer, then refunds' body; tools/list_changed arrived"


async def second_list(client: Client) -> str:
    names = await tool_names(client)
    expect("issue_refund" in names, "issue_refund offered", sorted(names))
    return ", ".join(sorted(names))


async def record(client: Client) -> str:
    read = await client.read_resource(RUN.record_uri())
    text = "".join(getattr(content, "text", "") for content in read.contents)
    events = []
    for line in text.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            raise Failed("JSON Lines", line) from None
    moved = [
        event
        for event in events
        if event.get("event") == "move"
        and (event.get("from"), event.get("to"), event.get("by")) == ("triage", "refunds", "route")
    ]
    expect(bool(moved), "a move event from triage to refunds by route", [e.get("event") for e in events])
    return f"{len(events)} events, the move triage -> refunds by route among them"


# The desk's refunds skill declares a step, so the one list holds skip_step
# (SPEC §15.9).
STABLE_TOOLS = TRIAGE_TOOLS | {"issue_refund", "charge_history", "export_rows", "render_chart", "skip_step"}


async def stable_list(client: Client) -> str:
    names = await tool_names(client)
    expect(names == STABLE_TOOLS, f"exactly {sorted(STABLE_TOOLS)}", sorted(names))
    return ", ".join(sorted(names))


async def refused_refund(client: Client) -> str:
    result = await client.call_tool("issue_refund", RUN.arguments(RISKY_ORDER))
    RUN.take(result)
    blocks = texts(result)
    position = "This run is in 'triage'"
    expect(result.is_error and any(position in block for block in blocks), f"a tool error ending with {position!r}", blocks)
    return "refused from triage, with the run's position"


async def routed_call(client: Client) -> str:
    result = await client.call_tool("lookup_order", RUN.arguments(RISKY_ORDER))
    check_risky_order(result)
    blocks = texts(result)
    marker = '<skill_content name="refunds">'
    expect(len(blocks) >= 2 and marker in blocks[-1], f"a last text block holding {marker}", blocks[1:])
    return "canned answer (resultType complete), then refunds' body"


async def strict_record(client: Client) -> str:
    detail = await record(client)
    read = await client.read_resource(RUN.record_uri())
    text = "".join(getattr(content, "text", "") for content in read.contents)
    start = json.loads(text.splitlines()[0])
    expect(start.get("tools") == "strict", "the run started under the strict policy", start.get("tools"))
    return detail + "; the start under the strict policy"


async def upstream_list(client: Client) -> str:
    names = await tool_names(client)
    expect("lookup_order" in names, "lookup_order offered", sorted(names))
    return ", ".join(sorted(names))


async def upstream_call(client: Client) -> str:
    answer = check_risky_order(await client.call_tool("lookup_order", RISKY_ORDER))
    return json.dumps(answer, separators=(",", ":"))


async def scenario(args: argparse.Namespace, steps: Steps) -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            changed.set()

    server: Any = StdioServerParameters(command=args.command[0], args=args.command[1:])
    if args.url is not None:
        server = args.url
    # No response cache, so the second tools/list reaches the server.
    client = Client(server, mode=args.mode, cache=None, message_handler=on_message, read_timeout_seconds=args.timeout)
    if args.upstream_only:
        plan = [("tools/list", upstream_list), ("tools/call", upstream_call)]
    elif args.mode == "auto":
        plan = [
            ("server/discover", lambda c: initialize(c, args.map)),
            ("tools/list (one for every request)", stable_list),
            ("tools/call issue_refund", refused_refund),
            ("tools/call lookup_order", routed_call),
            ("tools/list after the move", stable_list),
            ("resources/read skillgraph://record", strict_record),
        ]
    else:
        plan = [
            ("initialize", lambda c: initialize(c, args.map)),
            ("tools/list", first_list),
            ("tools/call lookup_order", lambda c: risky_call(c, changed, args.timeout)),
            ("tools/list after the move", second_list),
            ("resources/read skillgraph://record", record),
        ]
    await run_plan(client, plan, steps, args.timeout)


async def run_plan(client: Client, plan: list[tuple[str, Any]], steps: Steps, timeout: float) -> None:
    """Run each step of `plan` on `client`, one `ok`/`FAIL` line each."""
    step = "connect"
    try:
        with anyio.fail_after(timeout * (len(plan) + 1)):
            async with client:
                for step, run in plan:
                    try:
                        steps.ok(step, await run(client))
                    except Failed as failed:
                        steps.fail(step, failed)
                    except MCPError as err:
                        steps.fail(step, Failed("an answer", f"the error {err}"))
    except Exception as err:  # the connection broke: the step it broke in fails, naming why
        steps.fail(step, Failed("an answer", describe(err)))


def describe(err: BaseException) -> str:
    """An exception's type and message, looking inside exception groups."""
    while isinstance(err, BaseExceptionGroup) and len(err.exceptions) == 1:
        err = err.exceptions[0]
    return f"{type(err).__name__}: {err}"


def start_http(command: list[str], timeout: float) -> tuple[subprocess.Popen[str], str]:
    """Start the server over HTTP on a free port; its address, from its standard error.

    Its standard error is copied to ours, before and after that line, so that
    the pipe never fills."""
    child = subprocess.Popen([*command, "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None
    for line in child.stderr:
        sys.stderr.write(line)
        found = re.search(r"listening on (http://\S+)", line)
        if found:
            stderr = child.stderr
            threading.Thread(target=lambda: [sys.stderr.write(rest) for rest in stderr], daemon=True).start()
            return child, found.group(1)
    child.wait(timeout)
    raise SystemExit(f"the server ended before it listened (exit {child.returncode})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream-only", action="store_true", help="check a bare upstream: tools/list and one call")
    parser.add_argument("--mode", choices=["legacy", "auto"], default="legacy", help="legacy: the initialize handshake; auto: the SDK's default, the sessionless revision")
    parser.add_argument("--map", type=Path, help="the map folder, to check the instructions against triage's SKILL.md")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for each answer (default 30)")
    parser.add_argument("command", nargs="+", help="the server's command line, after --")
    parser.add_argument("--http", action="store_true", help="start the server with --http 127.0.0.1:0 and speak streamable HTTP to it")
    args = parser.parse_args()
    return run_scenario(scenario, args)


def run_scenario(scenario: Any, args: argparse.Namespace) -> int:
    """Run `scenario` against `args.command`, started over HTTP first when
    `args.http`; the exit code: 1 when a step failed."""
    args.url = None
    child = None
    if args.http:
        child, args.url = start_http(args.command, args.timeout)
        RUN.http = True
    steps = Steps()
    try:
        anyio.run(scenario, args, steps)
    finally:
        if child is not None:
            child.terminate()
            child.wait(args.timeout)
    return 1 if steps.failures else 0


if __name__ == "__main__":
    sys.exit(main())
