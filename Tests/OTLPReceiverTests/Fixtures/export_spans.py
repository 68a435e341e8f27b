"""Exports a fixed set of spans with the official OpenTelemetry Python SDK.

    python3 export_spans.py ENDPOINT protobuf|json [TOKEN [SERVICE]]

ENDPOINT is the full traces URL (http://127.0.0.1:PORT/v1/traces). The
protobuf run uses the SDK's own OTLP/HTTP exporter (gzip, as a Collector
sends by default). The SDK ships no OTLP/JSON exporter, so the json run
encodes the same spans with the SDK's protobuf encoder and prints them with
protobuf's JSON mapping, then fixes the ids to hex as the OTLP spec asks
(the generic mapping writes base64). Prints the ids it used as JSON on stdout.
"""
import json
import sys
import urllib.request

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, Status, StatusCode

endpoint, encoding = sys.argv[1], sys.argv[2]
token = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
service = sys.argv[4] if len(sys.argv) > 4 else "orders"
headers = {"Authorization": f"Bearer {token}"} if token else {}


class JSONExporter(SpanExporter):
    def __init__(self):
        self.status = None

    def export(self, spans):
        body = MessageToDict(encode_spans(spans))
        for group in body.get("resourceSpans", []):
            for scope in group.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = __import__("base64").b64decode(span[key]).hex()
                    # The JSON mapping writes enum names; OTLP/JSON wants integers.
                    span["kind"] = SpanKind[span["kind"].replace("SPAN_KIND_", "")].value + 1
        request = urllib.request.Request(endpoint, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json", **headers})
        with urllib.request.urlopen(request) as response:
            self.status = response.status
        return SpanExportResult.SUCCESS

    def shutdown(self):
        pass


if encoding == "protobuf":
    exporter = OTLPSpanExporter(endpoint=endpoint, headers=headers, compression=Compression.Gzip)
else:
    exporter = JSONExporter()
provider = TracerProvider(resource=Resource.create({"service.name": service, "host.name": "node-7",
                                                    "service.instance.id": service + "-1"}))
# One span per export: children end and are sent before their parents.
provider.add_span_processor(SimpleSpanProcessor(exporter))
tracer = provider.get_tracer("netinspect-test")

ids = {}
with tracer.start_as_current_span("GET /orders/{id}", kind=SpanKind.SERVER, attributes={
    "http.request.method": "GET", "url.scheme": "http", "server.address": "orders.local", "server.port": 8080,
    "url.path": "/orders/42", "url.query": "full=1", "http.response.status_code": 200,
    "http.request.header.accept": ["application/json"], "http.response.body.size": 321,
}) as server:
    ids["server"] = format(server.get_span_context().span_id, "016x")
    ids["trace"] = format(server.get_span_context().trace_id, "032x")
    with tracer.start_as_current_span("load order", kind=SpanKind.INTERNAL) as handler:
        with tracer.start_as_current_span("SELECT orders", kind=SpanKind.CLIENT, attributes={
            "db.system": "postgresql", "db.statement": "SELECT * FROM orders WHERE id = $1",
        }):
            pass
        with tracer.start_as_current_span("POST", kind=SpanKind.CLIENT, attributes={
            "http.request.method": "POST", "url.full": "https://payments.local/charge",
            "http.response.status_code": 503, "error.type": "503",
            "http.request.header.content-type": ["application/json"],
            "http.request.body.content": '{"amount":42}',
        }) as client:
            ids["client"] = format(client.get_span_context().span_id, "016x")
        with tracer.start_as_current_span("GET", kind=SpanKind.CLIENT, attributes={
            "http.method": "GET", "http.url": "http://legacy.local/stock?sku=9", "http.status_code": 200,
        }) as legacy:
            ids["legacy"] = format(legacy.get_span_context().span_id, "016x")
        with tracer.start_as_current_span("GET", kind=SpanKind.CLIENT, attributes={
            "http.request.method": "GET", "url.full": "http://down.local/", "error.type": "ConnectionRefusedError",
        }) as failed:
            failed.set_status(Status(StatusCode.ERROR, "connection refused"))
            ids["failed"] = format(failed.get_span_context().span_id, "016x")
provider.shutdown()
print(json.dumps(ids))
