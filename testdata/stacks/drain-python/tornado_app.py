"""A Tornado service for drain-test's differential test, started as
`python3 tornado_app.py` (PORT, PRE_DRAIN_MS, SLOW_MS from the environment;
/slow?ms=N takes N ms). MODE=good (the default): on SIGTERM readiness
answers 503 for PRE_DRAIN_MS while the listener keeps serving, then
server.stop() closes the listener, the requests in flight finish (counted:
close_all_connections() would cut them) and the process exits 0.
MODE=stopnow: server.stop() at the signal, no pre-drain."""
import asyncio
import os
import signal

import tornado.httpserver
import tornado.web

MODE = os.environ.get("MODE", "good")
PORT = int(os.environ.get("PORT", "8080"))
PRE = int(os.environ.get("PRE_DRAIN_MS", "0")) / 1000
SLOW = int(os.environ.get("SLOW_MS", "1500"))
state = {"draining": False, "active": 0}


class Ready(tornado.web.RequestHandler):
    def get(self):
        if state["draining"]:
            self.set_status(503)
            self.write("draining\n")
        else:
            self.write("ready\n")


class Live(tornado.web.RequestHandler):
    def get(self):
        self.write("alive\n")


class Hello(tornado.web.RequestHandler):
    def get(self):
        self.write("hello from tornado\n")


class Slow(tornado.web.RequestHandler):
    async def get(self):
        state["active"] += 1
        try:
            await asyncio.sleep(int(self.get_argument("ms", str(SLOW))) / 1000)
            self.write("slow done " + "x" * 4096 + "\n")
            await self.flush()
        finally:
            state["active"] -= 1


async def main():
    app = tornado.web.Application([(r"/ready", Ready), (r"/live", Live), (r"/app", Hello), (r"/slow", Slow)])
    server = tornado.httpserver.HTTPServer(app)
    server.listen(PORT, "127.0.0.1")
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    if MODE == "good":
        state["draining"] = True
        await asyncio.sleep(PRE)
    server.stop()
    if MODE == "good":
        # close_all_connections() cuts requests still running: wait for
        # them first (bounded), as a graceful stop does.
        for _ in range(1000):
            if state["active"] == 0:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
    await asyncio.wait_for(server.close_all_connections(), 10)


if __name__ == "__main__":
    asyncio.run(main())
