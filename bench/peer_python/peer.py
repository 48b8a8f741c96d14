#!/usr/bin/env python3
"""A Python collector doing the work Flowmeter's collector does, the way a team
would write it in an afternoon: aiohttp + orjson + confluent-kafka.

POST /v1/diagnostics with a batch in Flowmeter's wire format (the ingest request of docs/api.md):
 - parses with orjson and checks the batch-level keys (400 otherwise);
 - hashes the install id once per batch (HMAC-SHA-256);
 - per event: parses occurredAt (RFC 3339), counts it in a dict keyed by
   (appID, platform, appVersion, buildConfiguration, kind, widgetType, minute),
   and produces it, enriched, to flowmeter.events.v1 keyed by series;
 - every ROLLUP_INTERVAL seconds produces one rollup per key to flowmeter.rollups.v1;
 - answers 202 {"accepted": n, "dropped": d}: after enqueue (ACK=enqueue, the
   default) or after every event's delivery report (ACK=delivered).
GET /stats returns counters.

Environment: KAFKA_BOOTSTRAP (required), PORT (8090), ACK (enqueue|delivered),
ROLLUP_INTERVAL (5), LINGER_MS (5).
"""
import asyncio, datetime, hashlib, hmac, os
import orjson
from aiohttp import web
from confluent_kafka import Producer

PORT = int(os.environ.get("PORT", "8090"))
ACK = os.environ.get("ACK", "enqueue")
SALT = b"bench-salt"
producer = Producer({
    "bootstrap.servers": os.environ["KAFKA_BOOTSTRAP"],
    "acks": "all", "enable.idempotence": True, "compression.type": "lz4",
    "linger.ms": int(os.environ.get("LINGER_MS", "5")),
    "queue.buffering.max.messages": 1000000,
})
stats = {"requests": 0, "events": 0, "dropped": 0, "bad_requests": 0, "delivered": 0, "delivery_errors": 0}
agg = {}

def produce(topic, value, key, callback=None):
    while True:
        try:
            producer.produce(topic, value, key, on_delivery=callback)
            return
        except BufferError:
            producer.poll(0.005)

def parse_time(s):
    return datetime.datetime.fromisoformat(s).timestamp()

async def ingest(request):
    body = await request.read()
    try:
        batch = orjson.loads(body)
        client = batch["client"]; events = batch["events"]
        app = client["appID"]; version = client["appVersion"]; platform = client["platform"]
        config = client.get("buildConfiguration", "release")
        install = hmac.new(SALT, client.get("installID", "").encode(), hashlib.sha256).hexdigest()
        if not isinstance(events, list):
            raise TypeError
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        stats["bad_requests"] += 1
        return web.Response(status=400)
    loop = asyncio.get_running_loop()
    done = loop.create_future() if ACK == "delivered" else None
    pending = [0]
    def delivered(err, msg):
        if err is None:
            stats["delivered"] += 1
        else:
            stats["delivery_errors"] += 1
        pending[0] -= 1
        if done is not None and pending[0] == 0 and not done.done():
            done.set_result(None)
    accepted = dropped = 0
    for e in events:
        try:
            kind = e["kind"]; wtype = e.get("widgetType")
            minute = int(parse_time(e["occurredAt"]) // 60)
            count = e.get("count", 1)
        except (KeyError, TypeError, ValueError, AttributeError):
            dropped += 1
            continue
        key = (app, platform, version, config, kind, wtype, minute)
        agg[key] = agg.get(key, 0) + count
        e["appID"] = app; e["appVersion"] = version; e["platform"] = platform
        e["buildConfiguration"] = config; e["installHash"] = install
        pending[0] += 1
        produce("flowmeter.events.v1", orjson.dumps(e), f"{app}|{kind}|{wtype}".encode(), delivered)
        accepted += 1
    producer.poll(0)
    stats["requests"] += 1; stats["events"] += accepted; stats["dropped"] += dropped
    if done is not None and accepted:
        await done
    return web.Response(status=202, body=orjson.dumps({"accepted": accepted, "dropped": dropped}),
                        content_type="application/json")

async def get_stats(request):
    producer.poll(0)
    return web.Response(body=orjson.dumps({**stats, "series": len(agg), "queued": len(producer)}),
                        content_type="application/json")

async def background(app):
    interval = float(os.environ.get("ROLLUP_INTERVAL", "5"))
    async def poll():
        while True:
            producer.poll(0)
            await asyncio.sleep(0.001)
    async def rollups():
        while True:
            await asyncio.sleep(interval)
            items = list(agg.items()); agg.clear()
            for (a, p, v, c, k, w, m), n in items:
                produce("flowmeter.rollups.v1", orjson.dumps({"appID": a, "platform": p, "appVersion": v,
                        "buildConfiguration": c, "kind": k, "widgetType": w, "minute": m, "events": n}),
                        f"{a}|{k}|{w}|{m}".encode())
    tasks = [asyncio.create_task(poll()), asyncio.create_task(rollups())]
    yield
    for t in tasks:
        t.cancel()
    producer.flush(10)

app = web.Application(client_max_size=8 << 20)
app.router.add_post("/v1/diagnostics", ingest)
app.router.add_get("/stats", get_stats)
app.cleanup_ctx.append(background)

if __name__ == "__main__":
    web.run_app(app, host="127.0.0.1", port=PORT, access_log=None, print=None)
