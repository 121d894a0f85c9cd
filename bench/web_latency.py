#!/usr/bin/env python3
"""Client side of bench/web.sh. Usage:
  web_latency.py URL RUNS PATH...   warm p50/p95 of each page (first request dropped), with the cookie: one
                                    connection per request (`Connection: close`) and one kept-alive connection
  web_latency.py URL first PATH     the time of the very first request for PATH
  web_latency.py URL live FILE      subscribe to /events (then create FILE.ready), wait for one `refs` event,
                                    write its arrival time to FILE
"""
import http.client
import socket
import sys
import time
import urllib.parse

url = urllib.parse.urlsplit(sys.argv[1])
token = urllib.parse.parse_qs(url.query)["token"][0]
cookie = f"jules_web_{url.port}={token}"


def get(path, conn=None):
    # Without `conn`: a connection per request, as a browser's first load and curl do. With one: a kept-alive
    # connection, as a browser's later requests; before the server set TCP_NODELAY, Nagle's algorithm and the
    # client's delayed ACK added ~40 ms there to a response written in two pieces.
    keep = conn is not None
    if not keep:
        conn = http.client.HTTPConnection(url.hostname, url.port)
    t = time.perf_counter()
    conn.request("GET", path, headers={"Cookie": cookie} if keep else {"Cookie": cookie, "Connection": "close"})
    r = conn.getresponse()
    body = r.read()
    assert r.status == 200, (path, r.status, body[:200])
    return time.perf_counter() - t


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


mode = sys.argv[2]
if mode == "live":
    # A plain socket: http.client ends a response without a length at its first read.
    s = socket.create_connection((url.hostname, url.port))
    s.sendall(f"GET /events HTTP/1.1\r\nHost: {url.netloc}\r\nCookie: {cookie}\r\n\r\n".encode())
    f = s.makefile("rb")
    ready = False
    while True:
        line = f.readline()
        assert line, "the event stream ended"
        if not ready and line.startswith(b"retry:"):
            # Subscribed: the caller may move the refs now.
            open(sys.argv[3] + ".ready", "w").close()
            ready = True
        if line.startswith(b"event: refs"):
            open(sys.argv[3], "w").write(str(time.time()))
            break
elif mode == "first":
    print(f"first page {sys.argv[3]} in a fresh clone: {1000 * get(sys.argv[3]):.1f} ms (target <= 300 ms)")
else:
    runs = int(mode)
    for path in sys.argv[3:]:
        get(path)
        xs = [get(path) for _ in range(runs)]
        print(f"web  {path}: p50 {1000 * pct(xs, 50):.2f} ms, p95 {1000 * pct(xs, 95):.2f} ms (HTML, warm, connection: close)")
        conn = http.client.HTTPConnection(url.hostname, url.port)
        get(path, conn)
        xs = [get(path, conn) for _ in range(runs)]
        conn.close()
        print(f"web  {path}: p50 {1000 * pct(xs, 50):.2f} ms, p95 {1000 * pct(xs, 95):.2f} ms (HTML, warm, keep-alive)")
