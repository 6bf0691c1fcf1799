"""An aiohttp service for drain-test's differential test, started as
`python3 aiohttp_app.py` (PORT, PRE_DRAIN_MS, SLOW_MS from the environment;
/slow?ms=N takes N ms). MODE=good (the default): on SIGTERM readiness
answers 503 for PRE_DRAIN_MS while the listener keeps serving, then the
run_app cleanup closes the listener and waits for the requests in flight.
MODE=plain is aiohttp's own web.run_app: SIGTERM closes the listener at
once (GracefulExit), no pre-drain."""
import asyncio
import os
import signal

from aiohttp import web

MODE = os.environ.get("MODE", "good")
PORT = int(os.environ.get("PORT", "8080"))
PRE = int(os.environ.get("PRE_DRAIN_MS", "0")) / 1000
SLOW = int(os.environ.get("SLOW_MS", "1500"))
state = {"draining": False}


async def ready(request):
    if state["draining"]:
        return web.Response(text="draining\n", status=503)
    return web.Response(text="ready\n")


async def live(request):
    return web.Response(text="alive\n")


async def hello(request):
    return web.Response(text="hello from aiohttp\n")


async def slow(request):
    await asyncio.sleep(int(request.query.get("ms", SLOW)) / 1000)
    return web.Response(text="slow done " + "x" * 4096 + "\n")


def make_app():
    app = web.Application()
    app.router.add_get("/ready", ready)
    app.router.add_get("/live", live)
    app.router.add_get("/app", hello)
    app.router.add_get("/slow", slow)
    return app


def raise_exit():
    raise web.GracefulExit()


async def on_startup(app):
    # aiohttp's own way out is GracefulExit raised from a loop callback
    # (what run_app's SIGTERM handler does at once): here PRE_DRAIN_MS
    # later, readiness 503 meanwhile. run_app's cleanup then closes the
    # listener and waits for the requests in flight (shutdown_timeout).
    loop = asyncio.get_running_loop()

    def term():
        state["draining"] = True
        loop.call_later(PRE, raise_exit)

    loop.add_signal_handler(signal.SIGTERM, term)


if __name__ == "__main__":
    app = make_app()
    if MODE == "plain":
        web.run_app(app, host="127.0.0.1", port=PORT, print=None)
    else:
        app.on_startup.append(on_startup)
        web.run_app(app, host="127.0.0.1", port=PORT, print=None, handle_signals=False, shutdown_timeout=10)
