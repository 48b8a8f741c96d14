#!/usr/bin/python3
"""Writes Dashboards/grafana/*.json, the Grafana dashboards of Flowmeter.

usage: scripts/ops/render-dashboards.py [REPOSITORY_ROOT]

Panels are listed as (title, kind, queries) so the two dashboards read as what they show; the layout (two panels a
row) and Grafana's boilerplate are filled in here. The queries use only metrics of docs/metrics.md, recording rules
of Dashboards/prometheus/flowmeter.rules.yml, and Prometheus's own ALERTS series; OperationsTests checks that.
"""
import json
import os
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
OUT = os.path.join(ROOT, "Dashboards", "grafana")
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
RATE = "$__rate_interval"


def panel(title, queries, kind="timeseries", unit="short", description="", width=12, stack=False):
    targets = [
        {"refId": chr(ord("A") + index), "datasource": DATASOURCE, "expr": expr, "legendFormat": legend,
         **({"format": "table", "instant": True} if kind == "table" else {})}
        for index, (expr, legend) in enumerate(queries)
    ]
    body = {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "targets": targets,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {},
        "_width": width,
    }
    if kind == "timeseries":
        body["fieldConfig"]["defaults"]["custom"] = {"stacking": {"mode": "normal" if stack else "none"}}
        body["options"] = {"legend": {"displayMode": "table", "placement": "right", "calcs": ["lastNotNull", "max"]},
                           "tooltip": {"mode": "multi"}}
    return body


def row(title):
    return {"type": "row", "title": title, "collapsed": False, "panels": [], "_width": 24}


def layout(panels):
    x, y, height, placed = 0, 0, 8, []
    for index, body in enumerate(panels, start=1):
        width = body.pop("_width")
        if x + width > 24:
            x, y = 0, y + height
        h = 1 if body["type"] == "row" else height
        body["id"] = index
        body["gridPos"] = {"x": x, "y": y, "w": width, "h": h}
        placed.append(body)
        x += width
        if x >= 24 or body["type"] == "row":
            x, y = 0, y + h
    return placed


def variable(name, query, label, include_all=True):
    return {
        "name": name, "label": label, "type": "query", "datasource": DATASOURCE,
        "query": {"query": query, "refId": name}, "definition": query, "refresh": 2,
        "includeAll": include_all, "multi": include_all, "allValue": ".*",
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]} if include_all else {},
        "sort": 1,
    }


def dashboard(uid, title, description, panels, variables):
    return {
        "uid": uid,
        "title": title,
        "description": description,
        "tags": ["flowmeter"],
        "timezone": "utc",
        "editable": True,
        "schemaVersion": 39,
        "version": 1,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "links": [{"title": "Flowmeter dashboards", "type": "dashboards", "tags": ["flowmeter"], "asDropdown": True}],
        "templating": {"list": [
            {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
             "current": {"text": "Prometheus", "value": "flowmeter-prometheus"}, "hide": 0},
        ] + variables},
        "annotations": {"list": [
            {"name": "Flowmeter alerts", "datasource": DATASOURCE, "enable": True, "iconColor": "red",
             "expr": 'ALERTS{alertname=~"Flowmeter.*", alertstate="firing"}', "step": "60s",
             "titleFormat": "{{alertname}}", "textFormat": "{{app}} {{widget_type}} {{instance}}"},
        ]},
        "panels": layout(panels),
    }


APP = 'app=~"$app"'
schema = dashboard(
    "flowmeter-schema-health",
    "Flowmeter / Schema health",
    "What the apps' decoders report: unknown and malformed widget types, new types, clean decodes, event outcomes. "
    "Release builds only where the metric has build_configuration.",
    [
        row("Unknown types"),
        panel("unknownType by app and widget type",
              [(f'sum by (app, widget_type) (app_kind_widget_type:flowmeter_diagnostic_events:rate5m{{kind="unknownType", {APP}}})',
                "{{app}} {{widget_type}}")], unit="ops",
              description="Occurrences per second (the events' count field), release builds."),
        panel("unknownType per decode, against its baseline",
              [(f'app_kind_widget_type:flowmeter_diagnostic_events_per_traffic:ratio_rate5m{{kind="unknownType", {APP}}}',
                "{{app}} {{widget_type}}"),
               (f'app_kind_widget_type:flowmeter_diagnostic_events_per_traffic:ratio_baseline{{kind="unknownType", {APP}}}',
                "baseline {{app}} {{widget_type}}")],
              unit="percentunit",
              description="FlowmeterUnknownTypeSpike fires at three times the baseline (the larger of the previous "
                          "hour's and the previous day's average, both ending an hour ago)."),
        row("Malformed payloads and new types"),
        panel("malformedPayload by widget type",
              [(f'sum by (app, widget_type) (app_kind_widget_type:flowmeter_diagnostic_events:rate5m{{kind="malformedPayload", {APP}}})',
                "{{app}} {{widget_type}}")], unit="ops"),
        panel("New widget types (last hour)",
              [(f'ALERTS{{alertname="FlowmeterNewWidgetType", {APP}}}', "")], kind="table",
              description="Types an app reported for the first time in a day, from the FlowmeterNewWidgetType rule. "
                          "The detector's FlowmeterNewType alerts (flowmeter watch) are in Alertmanager."),
        row("Traffic"),
        panel("Diagnostics by kind",
              [(f'sum by (app, kind) (app_kind:flowmeter_diagnostic_events:rate5m{{{APP}}})', "{{app}} {{kind}}")],
              unit="ops", stack=True),
        panel("Decodes and decode-clean batches",
              [(f'app:flowmeter_decodes:rate5m{{{APP}}}', "decodes {{app}}"),
               (f'app:flowmeter_decode_clean_batches:rate5m{{{APP}}}', "clean batches {{app}}")], unit="ops",
              description="Decodes: pages the apps decoded. Clean batches: accepted batches without any diagnostic."),
        panel("Diagnostics per decode",
              [(f'app:flowmeter_diagnostic_events:rate5m{{{APP}}} / app:flowmeter_traffic:rate5m{{{APP}}}', "{{app}}")],
              unit="percentunit"),
        panel("Events by outcome (collector)",
              [('outcome:flowmeter_events:rate5m', "{{outcome}}")], unit="ops", stack=True,
              description="Every event of a decoded batch gets exactly one outcome."),
    ],
    [variable("app", "label_values(flowmeter_decodes_total, app)", "App")],
)

JOB = 'job=~"$job", instance=~"$instance"'
collector = dashboard(
    "flowmeter-collector-health",
    "Flowmeter / Collector health",
    "The collectors: HTTP, Kafka delivery, rate limits, the spool and the in-process sink; standalone sinks.",
    [
        row("HTTP"),
        panel("Requests by route and status",
              [(f'sum by (route, status) (rate(flowmeter_http_requests_total{{{JOB}}}[{RATE}]))', "{{route}} {{status}}")],
              unit="reqps", stack=True),
        panel("Ingest 5xx ratio",
              [('job:flowmeter_ingest_errors:ratio_rate5m{job=~"$job"}', "{{job}}")], unit="percentunit",
              description="FlowmeterCollectorErrors: warning above 1% for 15 m, critical above 5% for 5 m."),
        panel("Latency by route (p50, p99)",
              [(f'histogram_quantile(0.5, sum by (route, le) (rate(flowmeter_http_request_duration_seconds_bucket{{{JOB}}}[{RATE}])))', "p50 {{route}}"),
               (f'histogram_quantile(0.99, sum by (route, le) (rate(flowmeter_http_request_duration_seconds_bucket{{{JOB}}}[{RATE}])))', "p99 {{route}}")],
              unit="s", description="From the request's headers to the end of its answer, including the wait for Kafka."),
        panel("Rejections by reason",
              [(f'sum by (reason) (rate(flowmeter_rejections_total{{{JOB}}}[{RATE}]))', "{{reason}}")], unit="reqps",
              stack=True),
        panel("In flight, suspended, connections",
              [(f'sum(flowmeter_http_requests_in_flight{{{JOB}}})', "in flight"),
               (f'sum(flowmeter_http_requests_suspended{{{JOB}}})', "suspended (waiting for Kafka)"),
               (f'sum(flowmeter_http_connections_open{{{JOB}}})', "open connections")]),
        panel("Rate-limited keys (top 10)",
              [(f'topk(10, sum by (key_id) (rate(flowmeter_rate_limited_requests_total{{{JOB}}}[{RATE}])))', "{{key_id}}")],
              unit="reqps", description="429 answers by key id (first 8 hex digits of the key's SHA-256)."),
        panel("Batches by outcome",
              [(f'sum by (outcome) (rate(flowmeter_batches_total{{{JOB}}}[{RATE}]))', "{{outcome}}")], unit="ops",
              stack=True),
        panel("Events dropped, share by outcome",
              [('job_outcome:flowmeter_events_dropped:ratio_rate5m{job=~"$job"}', "{{outcome}}")], unit="percentunit"),
        row("Kafka"),
        panel("Kafka up",
              [(f'flowmeter_kafka_up{{{JOB}}}', "{{instance}}")], unit="bool",
              description="1 while Kafka answers (the /readyz rule)."),
        panel("Producer queue depth",
              [(f'flowmeter_kafka_queue_depth{{{JOB}}}', "{{instance}}")]),
        panel("Delivery latency (p50, p99)",
              [(f'histogram_quantile(0.5, sum by (le) (rate(flowmeter_kafka_delivery_latency_seconds_bucket{{{JOB}}}[{RATE}])))', "p50"),
               ('job_instance:flowmeter_kafka_delivery_latency_seconds:p99_rate5m{job=~"$job", instance=~"$instance"}', "p99 {{instance}}")],
              unit="s"),
        panel("Deliveries, errors and producer rebuilds",
              [(f'sum(rate(flowmeter_kafka_delivered_total{{{JOB}}}[{RATE}]))', "delivered"),
               (f'sum by (error) (rate(flowmeter_kafka_delivery_errors_total{{{JOB}}}[{RATE}]))', "error {{error}}"),
               (f'sum(increase(flowmeter_kafka_producer_rebuilds_total{{{JOB}}}[{RATE}]))', "producer rebuilds")],
              unit="ops"),
        row("Disk spool"),
        panel("Spool bytes against its bound",
              [(f'sum by (instance) (flowmeter_spool_bytes{{{JOB}}})', "bytes {{instance}}"),
               (f'sum by (instance) (flowmeter_spool_max_bytes{{{JOB}}})', "bound {{instance}}")], unit="bytes",
              description="Batches Kafka did not take within a second are spooled and answered 202; past the bound "
                          "(--spool-max-bytes) they get 503. FlowmeterSpoolFilling fires at half and at 90%."),
        panel("Spooled records and the oldest one's age",
              [(f'sum by (instance) (flowmeter_spool_records{{{JOB}}})', "records {{instance}}"),
               (f'max by (instance) (flowmeter_spool_oldest_record_age_seconds{{{JOB}}})', "oldest, s {{instance}}")],
              description="Records not yet persisted by Kafka. FlowmeterSpoolStale fires when the oldest waits "
                          "more than 10 minutes."),
        panel("Spool appends, replay and drops",
              [(f'sum(rate(flowmeter_spool_appended_records_total{{{JOB}}}[{RATE}]))', "appended"),
               (f'sum(rate(flowmeter_spool_replayed_records_total{{{JOB}}}[{RATE}]))', "replayed"),
               (f'sum by (outcome) (rate(flowmeter_spool_requeued_messages_total{{{JOB}}}[{RATE}]))', "{{outcome}}"),
               (f'sum by (reason) (increase(flowmeter_spool_dropped_records_total{{{JOB}}}[{RATE}]))', "dropped {{reason}}")],
              unit="ops", description="Replayed: the replay rate once Kafka is back."),
        panel("Spool writable and refusals",
              [(f'min by (instance) (flowmeter_spool_writable{{{JOB}}})', "writable {{instance}}"),
               (f'sum by (reason) (rate(flowmeter_spool_refused_batches_total{{{JOB}}}[{RATE}]))', "refused {{reason}}"),
               (f'sum(rate(flowmeter_spool_write_errors_total{{{JOB}}}[{RATE}]))', "write errors")],
              description="0 while the spool is full or its last write failed: batches that need it get 503."),
        row("Sink"),
        panel("In-process sink",
              [(f'sum(rate(flowmeter_sink_applied_total{{{JOB}}}[{RATE}]))', "applied"),
               (f'sum(rate(flowmeter_sink_duplicates_total{{{JOB}}}[{RATE}]))', "duplicates"),
               (f'sum(rate(flowmeter_sink_bad_messages_total{{{JOB}}}[{RATE}]))', "bad messages"),
               (f'sum(rate(flowmeter_sink_deploys_total{{{JOB}}}[{RATE}]))', "deploys")], unit="ops",
              description="Only collectors running with --store and Kafka have an in-process sink."),
        panel("Deploy markers by outcome",
              [(f'sum by (outcome) (increase(flowmeter_deploy_markers_total{{{JOB}}}[{RATE}]))', "{{outcome}}")]),
        panel("Collectors", [(f'flowmeter_build_info{{{JOB}}}', "")], kind="table", width=24),
        row("Standalone sink (flowmeter sink --ops-listen)"),
        panel("Stalled (store down, dead letters unwritable)",
              [(f'max by (instance, reason) (flowmeter_sink_stalled{{{JOB}}}) == 1', "{{instance}} {{reason}}")],
              unit="bool",
              description="1 while the sink makes no progress: the store fails as a whole (read-only, permission "
                          "denied, disk full, unreachable) or dead letters cannot be written. FlowmeterSinkStalled "
                          "fires after 2 m; /readyz says why."),
        panel("Lag by partition (records)",
              [(f'max by (partition) (flowmeter_sink_partition_lag_records{{{JOB}}})', "partition {{partition}}")],
              description="Records of each batches-topic partition not yet counted, as of its last step. "
                          "FlowmeterSinkLagging fires above 100,000 for 15 m."),
        panel("Batches counted, deduped and dead-lettered",
              [(f'sum(rate(flowmeter_sink_applied_total{{{JOB}}}[{RATE}]))', "counted"),
               (f'sum(rate(flowmeter_sink_duplicates_total{{{JOB}}}[{RATE}]))', "duplicates (dedupe hits)"),
               (f'sum(rate(flowmeter_sink_dead_letters_total{{{JOB}}}[{RATE}]))', "dead letters"),
               (f'sum(rate(flowmeter_sink_refused_messages_total{{{JOB}}}[{RATE}]))', "refused by the store")],
              unit="ops"),
        panel("Store errors by kind",
              [(f'sum by (kind) (rate(flowmeter_sink_store_errors_total{{{JOB}}}[{RATE}]))', "{{kind}}")], unit="ops",
              stack=True),
        panel("Store transaction time (p50, p99)",
              [(f'histogram_quantile(0.5, sum by (le) (rate(flowmeter_sink_commit_seconds_bucket{{{JOB}}}[{RATE}])))', "p50"),
               (f'histogram_quantile(0.99, sum by (le) (rate(flowmeter_sink_commit_seconds_bucket{{{JOB}}}[{RATE}])))', "p99")],
              unit="s", description="One transaction per partition step: rollups, dedupe keys and the next offset."),
        panel("Lag (seconds)",
              [(f'max by (instance) (flowmeter_sink_lag_seconds{{{JOB}}})', "{{instance}}")], unit="s",
              description="Between the newest counted record's Kafka timestamp and when it was counted."),
    ],
    [variable("job", "label_values(flowmeter_build_info, job)", "Job"),
     variable("instance", 'label_values(flowmeter_build_info{job=~"$job"}, instance)', "Instance")],
)

os.makedirs(OUT, exist_ok=True)
for name, body in [("schema-health.json", schema), ("collector-health.json", collector)]:
    with open(os.path.join(OUT, name), "w") as file:
        json.dump(body, file, indent=2)
        file.write("\n")
