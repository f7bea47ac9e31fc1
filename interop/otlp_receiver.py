"""A test OTLP/HTTP receiver on the official `opentelemetry-proto` classes.

It listens on a loopback port, takes `POST /v1/traces` bodies of protobuf
`ExportTraceServiceRequest`, and writes each span it decodes to a file, one
JSON object a line: its name, trace id, span id, parent span id, kind,
attributes and events (each with its attributes), as the receiver read
them from the wire. Any other path or a body that does not decode is
answered 400, and said on standard error.

    python interop/otlp_receiver.py --out spans.jsonl

Port 0 picks a free port; once listening it prints one line,
`otlp-receiver: listening on http://127.0.0.1:PORT`, to standard error.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2


def value(any_value: common_pb2.AnyValue) -> Any:
    """An attribute's value as plain JSON."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(item) for item in any_value.array_value.values]
    if kind is None:
        return None
    return getattr(any_value, kind)


def attributes(pairs: Any) -> dict[str, Any]:
    """Key-values as a JSON object."""
    return {pair.key: value(pair.value) for pair in pairs}


class Receiver(BaseHTTPRequestHandler):
    """Decodes each export and appends its spans to the output file."""

    out_path = ""
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802 (the http.server name)
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.path != "/v1/traces":
            self.answer(400, f"no such path {self.path}")
            return
        request = trace_service_pb2.ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except Exception as error:  # a body that is not the message
            self.answer(400, f"not an ExportTraceServiceRequest: {error}")
            return
        lines = []
        for resource_spans in request.resource_spans:
            resource = attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    lines.append(
                        json.dumps(
                            {
                                "name": span.name,
                                "trace_id": span.trace_id.hex(),
                                "span_id": span.span_id.hex(),
                                "parent_span_id": span.parent_span_id.hex(),
                                "kind": span.kind,
                                "service": resource.get("service.name"),
                                "attributes": attributes(span.attributes),
                                "events": [
                                    {"name": event.name, "attributes": attributes(event.attributes)}
                                    for event in span.events
                                ],
                            }
                        )
                    )
        with self.lock, open(self.out_path, "a", encoding="utf-8") as out:
            for line in lines:
                out.write(line + "\n")
        reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def answer(self, status: int, why: str) -> None:
        print(f"otlp-receiver: {why}", file=sys.stderr, flush=True)
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        """Quiet: only what goes wrong is said."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the file each decoded span is appended to")
    parser.add_argument("--port", type=int, default=0)
    options = parser.parse_args()
    Receiver.out_path = options.out
    server = ThreadingHTTPServer(("127.0.0.1", options.port), Receiver)
    print(f"otlp-receiver: listening on http://127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
