#!/usr/bin/env python3
"""Client side of bench/web.sh. Usage:
  web_latency.py URL RUNS PATH...   warm p50/p95 of each page (first request dropped), with the cookie
  web_latency.py URL first PATH     the time of the very first request for PATH
  web_latency.py URL live FILE      wait for one `refs` event on /events, write its arrival time to FILE
"""
import http.client
import sys
import time
import urllib.parse

url = urllib.parse.urlsplit(sys.argv[1])
token = urllib.parse.parse_qs(url.query)["token"][0]
cookie = f"jules_web_{url.port}={token}"


def get(conn, path):
    t = time.perf_counter()
    conn.request("GET", path, headers={"Cookie": cookie, "Connection": "keep-alive"})
    r = conn.getresponse()
    body = r.read()
    assert r.status == 200, (path, r.status, body[:200])
    return time.perf_counter() - t


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


mode = sys.argv[2]
if mode == "live":
    conn = http.client.HTTPConnection(url.hostname, url.port)
    conn.request("GET", "/events", headers={"Cookie": cookie})
    r = conn.getresponse()
    while True:
        line = r.fp.readline()
        if line.startswith(b"event: refs"):
            open(sys.argv[3], "w").write(str(time.time()))
            break
elif mode == "first":
    conn = http.client.HTTPConnection(url.hostname, url.port)
    print(f"first page {sys.argv[3]} in a fresh clone: {1000 * get(conn, sys.argv[3]):.1f} ms (target <= 300 ms)")
else:
    runs = int(mode)
    conn = http.client.HTTPConnection(url.hostname, url.port)
    for path in sys.argv[3:]:
        get(conn, path)
        xs = [get(conn, path) for _ in range(runs)]
        print(f"web  {path}: p50 {1000 * pct(xs, 50):.2f} ms, p95 {1000 * pct(xs, 95):.2f} ms (HTML, warm)")
