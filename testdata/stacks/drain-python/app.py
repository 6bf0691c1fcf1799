"""A Flask service for gunicorn (sync or gthread): drain-test's
differential test runs it. Readiness answers 503 once DRAIN_FLAG exists
(gunicorn.conf.py creates it when the master gets SIGTERM); /slow takes
SLOW_MS (default 1500)."""
import os
import time

from flask import Flask, jsonify

app = Flask(__name__)
FLAG = os.environ.get("DRAIN_FLAG", "")
SLOW = int(os.environ.get("SLOW_MS", "1500")) / 1000


@app.get("/ready")
def ready():
    if FLAG and os.path.exists(FLAG):
        return "draining\n", 503
    return "ready\n"


@app.get("/live")
def live():
    return "alive\n"


@app.get("/status")
def status():
    # curl's differential test judges --expect-json and --expect-header
    # here: a JSON document, a header of the app's, one sent twice.
    resp = jsonify(status="ready", checks={"db": "ok"}, version=3)
    resp.headers["X-App-Status"] = "ready"
    resp.headers.add("X-Check", "first")
    resp.headers.add("X-Check", "second")
    return resp


@app.get("/app")
def hello():
    return "hello from gunicorn\n"


@app.get("/slow")
def slow():
    time.sleep(SLOW)
    return "slow done " + "x" * 4096 + "\n"
