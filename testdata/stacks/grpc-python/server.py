"""A real Python gRPC server for healthctl's scripts: grpcio (Debian's
python3-grpcio) serving grpc.health.v1.Health/Check.

Debian packages grpcio but not its health servicer (grpcio-health-checking),
so the one method is served through grpcio's generic handlers, its two
one-field messages encoded by hand, as the official servicer answers: the
status of a known service, NOT_FOUND for an unknown one.

    /usr/bin/python3 server.py ADDR_FILE [--status S] [--service NAME=S]... [--no-health] [--max-recv N] [--addr HOST:PORT] [--check-delay-ms N] [--stop-after-ms N]

Listens on 127.0.0.1 port 0 (cleartext), writes "127.0.0.1:PORT" to
ADDR_FILE once serving, and serves until SIGTERM/SIGINT. S is SERVING,
NOT_SERVING or UNKNOWN; --status is the overall health ("" service,
default SERVING); --max-recv N refuses request messages over N bytes
(RESOURCE_EXHAUSTED, grpcio's own). --addr listens there instead (for
drain-test, which needs the port before the start); --check-delay-ms makes
each Check take N ms, so that calls are in flight when SIGTERM's stop(0)
cancels them (drain-test: a cancelled call is no readiness flip);
--stop-after-ms waits N ms after the signal before stop(0).
"""
import time
import os
import signal
import sys
import threading
from concurrent import futures

import grpc

STATUS = {"UNKNOWN": 0, "SERVING": 1, "NOT_SERVING": 2, "SERVICE_UNKNOWN": 3}


def varint(data, i):
    """Decodes the varint at data[i:]; returns (value, next index)."""
    shift = value = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ValueError("bad varint")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def service_of(request):
    """The service field (1, a string) of a HealthCheckRequest."""
    i, service = 0, ""
    while i < len(request):
        tag, i = varint(request, i)
        field, wire = tag >> 3, tag & 7
        if wire == 2:
            n, i = varint(request, i)
            if field == 1:
                service = request[i : i + n].decode("utf-8")
            i += n
        elif wire == 0:
            _, i = varint(request, i)
        else:
            raise ValueError("unexpected wire type %d" % wire)
    return service


def response(status):
    """A HealthCheckResponse{status}: field 1, a varint (omitted when 0)."""
    return b"" if status == 0 else bytes([0x08, status])


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    addr_file, args = argv[0], argv[1:]
    statuses, health, options = {"": STATUS["SERVING"]}, True, []
    addr, delay, stop_after = "127.0.0.1:0", 0.0, 0.0
    while args:
        a = args.pop(0)
        if a == "--status":
            statuses[""] = STATUS[args.pop(0)]
        elif a == "--service":
            name, s = args.pop(0).split("=", 1)
            statuses[name] = STATUS[s]
        elif a == "--addr":
            addr = args.pop(0)
        elif a == "--check-delay-ms":
            delay = int(args.pop(0)) / 1000.0
        elif a == "--stop-after-ms":
            stop_after = int(args.pop(0)) / 1000.0
        elif a == "--no-health":
            health = False
        elif a == "--max-recv":
            options.append(("grpc.max_receive_message_length", int(args.pop(0))))
        else:
            print("server.py: unknown argument " + a, file=sys.stderr)
            return 2

    def check(request, context):
        if delay:
            time.sleep(delay)
        try:
            service = service_of(request)
        except ValueError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        if service not in statuses:
            context.abort(grpc.StatusCode.NOT_FOUND, "unknown service")
        return response(statuses[service])

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=options)
    if health:
        # Bytes in, bytes out: no deserializer, no serializer.
        handler = grpc.method_handlers_generic_handler(
            "grpc.health.v1.Health", {"Check": grpc.unary_unary_rpc_method_handler(check)}
        )
        server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port(addr)
    server.start()
    tmp = addr_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("127.0.0.1:%d\n" % port)
    os.rename(tmp, addr_file)

    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    time.sleep(stop_after)
    server.stop(0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
