"""A FastAPI service run by uvicorn, started as `python3 uvicorn_app.py`:
drain-test's differential test runs it. uvicorn stops listening the moment
it gets SIGTERM; with MODE=good (the default) the server first answers
readiness 503 for PRE_DRAIN_MS, then runs uvicorn's graceful shutdown.
MODE=plain leaves uvicorn as it comes."""
import asyncio
import os
import threading

import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse, PlainTextResponse

MODE = os.environ.get("MODE", "good")
PRE = int(os.environ.get("PRE_DRAIN_MS", "0")) / 1000
SLOW = int(os.environ.get("SLOW_MS", "1500")) / 1000
app = FastAPI()
draining = False


@app.get("/ready")
async def ready():
    if draining:
        return PlainTextResponse("draining\n", status_code=503)
    return PlainTextResponse("ready\n")


@app.get("/live")
async def live():
    return PlainTextResponse("alive\n")


@app.get("/status")
async def status():
    # curl's differential test judges --expect-json and --expect-header
    # here: a JSON document, a header of the app's, one sent twice.
    resp = JSONResponse({"status": "ready", "checks": {"db": "ok"}, "version": 3},
                        headers={"X-App-Status": "ready"})
    resp.raw_headers.append((b"x-check", b"first"))
    resp.raw_headers.append((b"x-check", b"second"))
    return resp


@app.get("/app")
async def hello():
    return PlainTextResponse("hello from uvicorn\n")


@app.get("/slow")
async def slow():
    await asyncio.sleep(SLOW)
    return PlainTextResponse("slow done " + "x" * 4096 + "\n")


class Server(uvicorn.Server):
    def handle_exit(self, sig, frame):
        global draining
        if MODE == "good" and not draining:
            draining = True
            threading.Timer(PRE, super().handle_exit, (sig, frame)).start()
            return
        super().handle_exit(sig, frame)


if __name__ == "__main__":
    port = int(os.environ["PORT"])
    Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")).run()
