"""The Flask app (app.py) under Waitress, for drain-test's differential
test: `python3 waitress_app.py` (PORT, PRE_DRAIN_MS, SLOW_MS from the
environment). MODE=good (the default): on SIGTERM readiness answers 503
(through app.py's DRAIN_FLAG) for PRE_DRAIN_MS while the listener keeps
serving, then the listener closes (on the loop's thread, the trigger kept),
the requests in flight finish (the task dispatcher's shutdown waits for
them, the loop writes their answers) and the process exits 0. MODE=plain
is Waitress as it comes: it does not handle SIGTERM, so SIGTERM kills it."""
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
MODE = os.environ.get("MODE", "good")
PORT = int(os.environ.get("PORT", "8080"))
PRE = int(os.environ.get("PRE_DRAIN_MS", "0")) / 1000
FLAG = os.environ.setdefault("DRAIN_FLAG", "/tmp/waitress-drain-%d.flag" % os.getpid())
if os.path.exists(FLAG):
    os.remove(FLAG)  # a run before this one's (one that died draining): ready again

from waitress import create_server, wasyncore  # noqa: E402

from app import app  # noqa: E402

server = create_server(app, host="127.0.0.1", port=PORT, threads=32)


def drain():
    time.sleep(PRE)
    # The listener only, closed on the loop's own thread (a trigger thunk).
    # server.close() closes the trigger as well: a request that finished
    # after it could not wake the loop to send its answer (EBADF in the task
    # thread), and under load the loop itself died (exit 1, in-flight cut).
    closed = threading.Event()

    def close_listener():
        wasyncore.dispatcher.close(server)
        closed.set()

    server.trigger.pull_trigger(close_listener)
    closed.wait(5)
    server.task_dispatcher.shutdown(cancel_pending=False, timeout=10)
    time.sleep(0.2)  # the loop writes the last answers out
    try:
        os.remove(FLAG)
    except OSError:
        pass
    os._exit(0)


def term(*_):
    open(FLAG, "w").close()
    threading.Thread(target=drain, daemon=True).start()


if MODE == "good":
    signal.signal(signal.SIGTERM, term)
server.run()
