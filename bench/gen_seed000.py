#!/usr/bin/env python3
"""Write a seed-000 events.jsonl of N sends among K personas (persona-00 …), for `git jules mail import`.

Deterministic: message m goes from persona m % K to persona (7m + 3) % K; every 50th is urgent; bodies carry
a little Markdown. Used by bench/mcp.sh and bench/web.sh. Usage: gen_seed000.py FILE N K
"""
import json
import sys

path, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
width = max(2, len(str(k - 1)))
P = [f"persona-{i:0{width}d}" for i in range(k)]
with open(path, "w") as f:
    for m in range(n):
        frm, to = P[m % k], P[(m * 7 + 3) % k]
        if to == frm:
            to = P[(m + 1) % k]
        ts = f"2026-01-{1 + m // 86400:02d}T{m // 3600 % 24:02d}:{m // 60 % 60:02d}:{m % 60:02d}Z"
        f.write(json.dumps({"event_id": f"e{m}", "ts": ts, "event_type": "send", "message_id": m,
                            "actor": frm, "from_persona": frm, "to_persona": to,
                            "subject": f"message {m}", "body": f"body of message {m}",
                            "attachments": [], "type": "status",
                            "priority": "urgent" if m % 50 == 0 else "normal"}) + "\n")
