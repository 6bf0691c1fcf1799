"""gunicorn closes its listeners the moment the master gets SIGTERM. With
MODE=good (the default) this hook gives it a pre-drain: on SIGTERM the
master creates DRAIN_FLAG (readiness then answers 503), keeps serving for
PRE_DRAIN_MS, and only then runs gunicorn's own graceful stop. MODE=plain
leaves gunicorn as it comes."""
import os
import signal
import threading

graceful_timeout = 2


def when_ready(server):
    if os.environ.get("MODE", "good") != "good":
        return
    pre = int(os.environ.get("PRE_DRAIN_MS", "0")) / 1000
    flag = os.environ["DRAIN_FLAG"]
    if os.path.exists(flag):
        os.remove(flag)  # a run before this one's
    stop = server.signal  # the arbiter's own handler: queue it, wake the loop

    def on_term(sig, frame):
        open(flag, "w").close()
        threading.Timer(pre, stop, (signal.SIGTERM, None)).start()

    signal.signal(signal.SIGTERM, on_term)
