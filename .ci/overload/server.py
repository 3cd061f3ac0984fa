#!/usr/bin/env python3
"""An overloaded HTTP service for .ci/overload-e2e (Python standard library only).

It serves WORKERS requests at once, each for SERVICE seconds, and queues the rest first
come first served without bound, so that its latency climbs with the load: with more than
WORKERS requests in it, a request waits (queued / WORKERS) x SERVICE before it is served.
Its capacity is WORKERS / SERVICE requests a second.

    server.py --workers 16 --service 0.08 --lifetime 300

prints `listening on 127.0.0.1:PORT` (a free port) and serves:
- GET /work      one request of work: 200 with a short body once a worker served it;
- GET /reset     drops the line: requests waiting in it are answered 503 at once (between
                 the client's phases, so that the backlog of one does not load the next);
- GET /stats     `queued N busy M served S`.

It stops by itself after --lifetime seconds (the script's bound), and on SIGTERM.
"""

import argparse
import collections
import http.server
import socketserver
import sys
import threading
import time


class Line:
    """The FIFO line and the workers that serve it."""

    def __init__(self, workers, service):
        self.service = service
        self.condition = threading.Condition()
        self.waiting = collections.deque()
        self.busy = 0
        self.served = 0
        self.generation = 0
        for _ in range(workers):
            threading.Thread(target=self.work, daemon=True).start()

    def submit(self):
        """Queues one request and blocks until it is served; True when it was."""
        job = {"done": threading.Event(), "ok": False, "generation": None}
        with self.condition:
            job["generation"] = self.generation
            self.waiting.append(job)
            self.condition.notify()
        job["done"].wait()
        return job["ok"]

    def work(self):
        while True:
            with self.condition:
                while not self.waiting:
                    self.condition.wait()
                job = self.waiting.popleft()
                if job["generation"] != self.generation:
                    job["done"].set()
                    continue
                self.busy += 1
            time.sleep(self.service)
            with self.condition:
                self.busy -= 1
                self.served += 1
            job["ok"] = True
            job["done"].set()

    def reset(self):
        with self.condition:
            self.generation += 1
            dropped = list(self.waiting)
            self.waiting.clear()
        for job in dropped:
            job["done"].set()
        return len(dropped)

    def stats(self):
        with self.condition:
            return "queued %d busy %d served %d" % (len(self.waiting), self.busy, self.served)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The headers and the body are two writes: with Nagle's algorithm, the body would wait
    # for the client's delayed acknowledgement (40 ms) on every kept-alive connection.
    disable_nagle_algorithm = True

    def do_GET(self):
        line = self.server.line
        if self.path.startswith("/work"):
            status, body = (200, b"served\n") if line.submit() else (503, b"dropped\n")
        elif self.path.startswith("/reset"):
            status, body = 200, b"dropped %d\n" % line.reset()
        elif self.path.startswith("/stats"):
            status, body = 200, (line.stats() + "\n").encode()
        else:
            status, body = 404, b"not found\n"
        try:
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client gave up on it (a cancelled request)

    def log_message(self, format, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 4096
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--service", type=float, default=0.08)
    parser.add_argument("--lifetime", type=float, default=300)
    options = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.line = Line(options.workers, options.service)
    threading.Timer(options.lifetime, server.shutdown).start()
    print("listening on 127.0.0.1:%d" % server.server_address[1], flush=True)
    server.serve_forever(poll_interval=0.2)
    sys.exit(0)


if __name__ == "__main__":
    main()
