#!/usr/bin/env python3
"""Write a `git fast-import` stream of N git-jules events (format v1, see docs/format.md) on REF.

Deterministic: the same N gives the same commits on any machine. Usage: gen_events.py N REF [ACTORS]
"""
import hashlib
import json
import sys

n = int(sys.argv[1])
ref = sys.argv[2]
actors = int(sys.argv[3]) if len(sys.argv) > 3 else 25
out = sys.stdout.buffer
kinds = ["bench.send", "bench.read", "bench.tag"]
for i in range(1, n + 1):
    actor = f"persona{i % actors:02d}"
    kind = kinds[i % 3]
    ts = 1_767_225_600 + i  # 2026-01-01 plus i seconds
    event = {
        "v": 1,
        "kind": kind,
        "actor": actor,
        "time": f"2026-01-01T00:00:00.000Z",
        "data": {"i": i, "to": f"persona{(i * 7) % actors:02d}", "subject": f"message {i}"},
    }
    canonical = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    eid = hashlib.sha256(canonical).hexdigest()
    msg = (
        f"jules-event {kind} {eid[:12]}\n\n".encode()
        + canonical
        + f"\n\nJules-Lamport: {i}\nJules-Event-Id: {eid}\n".encode()
    )
    out.write(f"commit {ref}\nmark :{i}\n".encode())
    out.write(f"author {actor} <{actor}@jules.invalid> {ts} +0000\n".encode())
    out.write(f"committer bench <bench@example.com> {ts} +0000\n".encode())
    out.write(f"data {len(msg)}\n".encode() + msg + b"\n")
    if i > 1:
        out.write(f"from :{i - 1}\n".encode())
    out.write(b"\n")
