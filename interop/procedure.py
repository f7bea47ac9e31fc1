"""A procedure held at the call gate, through `skillgraph serve --http`, by the official Python SDK.

    python interop/procedure.py --calls FILE [--timeout SECS] -- COMMAND [ARG...]

COMMAND serves a desk map whose `triage` skill has two steps (look the order
up, then track its parcel) in front of `interop/upstream.py --meta-out FILE`,
which writes down every call it receives. The client speaks the 2026-07-28
revision (the SDK's `auto` mode, over streamable HTTP) and checks SPEC §15:
`skip_step` is listed; `track_parcel` called first is refused as a tool error
naming the current step and `skip_step`, and never reaches the upstream; the
current step's tool goes through and its answer names the next step, which
then goes through too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mcp import Client

from client import RUN, Failed, Steps, expect, run_plan, run_scenario, texts

PARCEL = {"parcel_id": "JD0150"}
LOW_RISK_ORDER = {"order_id": 4413}


def upstream_calls(calls: Path) -> list[str]:
    """The tools the upstream received, in order."""
    if not calls.exists():
        return []
    return [json.loads(line)["tool"] for line in calls.read_text(encoding="utf-8").splitlines() if line]


async def scenario(args: argparse.Namespace, steps: Steps) -> None:
    client = Client(args.url, mode="auto", cache=None, read_timeout_seconds=args.timeout)

    async def listed(c: Client) -> str:
        names = sorted(tool.name for tool in (await c.list_tools()).tools)
        expect("skip_step" in names, "skip_step in the one list", names)
        return ", ".join(names)

    async def held(c: Client) -> str:
        result = await c.call_tool("track_parcel", RUN.arguments(PARCEL))
        RUN.take(result)
        said = " ".join(texts(result))
        expect(result.is_error, "a tool error", said)
        expect("step 1 of 2" in said and "lookup_order" in said and "skip_step" in said, "the current step and skip_step named", said)
        expect("track_parcel" not in upstream_calls(args.calls), "track_parcel never reaching the upstream", upstream_calls(args.calls))
        return "refused, naming step 1 of 2 (lookup_order); the upstream received nothing"

    async def current(c: Client) -> str:
        result = await c.call_tool("lookup_order", RUN.arguments(LOW_RISK_ORDER))
        said = " ".join(texts(result))
        expect(not result.is_error and "Next: step 2 of 2" in said, "an answer naming the next step", said)
        return "answered, naming step 2 of 2 (track_parcel)"

    async def next_step(c: Client) -> str:
        result = await c.call_tool("track_parcel", RUN.arguments(PARCEL))
        expect(not result.is_error, "track_parcel answered now", texts(result))
        calls = upstream_calls(args.calls)
        expect(calls == ["lookup_order", "track_parcel"], "the upstream received lookup_order, then track_parcel", calls)
        return "answered; the upstream received " + ", ".join(calls)

    plan = [
        ("tools/list", listed),
        ("tools/call track_parcel (held out)", held),
        ("tools/call lookup_order (step 1)", current),
        ("tools/call track_parcel (step 2)", next_step),
    ]
    await run_plan(client, plan, steps, args.timeout)

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=Path, required=True, help="the file the upstream writes each call it receives to")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for each answer (default 30)")
    parser.add_argument("command", nargs="+", help="the server's command line, after --")
    args = parser.parse_args()
    args.http = True
    return run_scenario(scenario, args)


if __name__ == "__main__":
    sys.exit(main())
