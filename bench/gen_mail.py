#!/usr/bin/env python3
"""Write a `git fast-import` stream of N git-jules *mail* events (format v1, see docs/format.md) on REF.

Every third event is a `mail.send` to one of ACTORS personas (default 25), in one of 50 named threads; the
others are the recipient's `mail.read` and `mail.tag` of the message sent just before. Deterministic: the same
N gives the same commits on any machine. Usage: gen_mail.py N REF [ACTORS]
"""
import hashlib
import json
import sys

n = int(sys.argv[1])
ref = sys.argv[2]
actors = int(sys.argv[3]) if len(sys.argv) > 3 else 25
out = sys.stdout.buffer
last_send, last_to = None, None
for i in range(1, n + 1):
    ts = 1_767_225_600 + i
    if i % 3 == 1 or last_send is None:
        actor = f"persona{i % actors:02d}"
        to = f"persona{(i * 7 + 1) % actors:02d}"
        if to == actor:
            to = f"persona{(i * 7 + 2) % actors:02d}"
        kind = "mail.send"
        data = {"to": [to], "subject": f"message {i}", "body": f"body of message {i}\n",
                "type": "task", "priority": "urgent" if i % 11 == 0 else "normal",
                "thread": f"topic-{i % 50}"}
    elif i % 3 == 2:
        actor, kind, data = last_to, "mail.read", {"message": last_send}
    else:
        actor, kind, data = last_to, "mail.tag", {"message": last_send, "tag": f"t{i % 5}"}
    event = {"v": 1, "kind": kind, "actor": actor,
             "time": f"2026-01-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.000Z", "data": data}
    canonical = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    eid = hashlib.sha256(canonical).hexdigest()
    if kind == "mail.send":
        last_send, last_to = eid, data["to"][0]
    msg = (f"jules-event {kind} {eid[:12]}\n\n".encode() + canonical
           + f"\n\nJules-Lamport: {i}\nJules-Event-Id: {eid}\n".encode())
    out.write(f"commit {ref}\nmark :{i}\n".encode())
    out.write(f"author {actor} <{actor}@jules.invalid> {ts} +0000\n".encode())
    out.write(f"committer bench <bench@example.com> {ts} +0000\n".encode())
    out.write(f"data {len(msg)}\n".encode() + msg + b"\n")
    if i > 1:
        out.write(f"from :{i - 1}\n".encode())
    out.write(b"\n")
