"""SIGTERM stops psd2gate at once: right after start-up, and while a
worker is busy (Kore patch 0030).

A stop sent while the workers were still starting was lost by a worker
that had just forked (it cleared the pending signal when it installed
its handlers): that worker waited for events forever and the parent for
it. A SIGTERM that landed while worker 1 (the one with the housekeeping
timer) was busy was seen only at its next timer. Each trial starts an
instance, which answers /health as soon as its first worker runs, and
lands the signal inside a burst of requests that arrive at once."""

import random
import socket
import threading
import time

import psd2lib

REQUEST = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def burst(port, n):
    """n connections, each one request, written together; answers are
    read (or the connection's end) before the sockets close."""
    socks = [socket.create_connection(("127.0.0.1", port), timeout=5)
             for _ in range(n)]
    for s in socks:
        s.sendall(REQUEST)
    for s in socks:
        try:
            s.recv(4096)
        except OSError:
            pass
        s.close()


def test_sigterm_in_a_burst_stops_within_seconds(service_setup):
    rnd = random.Random(8)
    for trial in range(8):
        port = psd2lib.free_port()
        srv = psd2lib.Server("conf/test.conf", port, "shutdown-%d" % trial,
                             psd2lib.CONF_MAIN_PORT)
        srv.start()
        sender = threading.Thread(target=burst, args=(port, 200))
        sender.start()
        time.sleep(rnd.uniform(0.0, 0.02))
        started = time.monotonic()
        rc = srv.stop(timeout=5)
        took = time.monotonic() - started
        sender.join()
        assert not srv.problems, (trial, srv.problems, srv.tail(20))
        assert rc == 0, (trial, rc)
        # stop() waits half a second for stragglers after the parent.
        assert took < 4, (trial, took)
