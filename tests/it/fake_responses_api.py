#!/usr/bin/env python3
"""A scripted stand-in for OpenAI's Responses API on 127.0.0.1, for tests/it/agent.rs
(codex_end_to_end_apply_patch_denied): Codex CLI 0.171.0 reaches it through a custom `model_providers` entry
(`wire_api = "responses"`). The model first asks for an apply_patch of the file, then ends.

Usage: fake_responses_api.py FILE LOG. Prints the port it listens on (one line) once it listens. Every
request body is appended to LOG as one JSON line, so the test reads what Codex sent back to the "model": the
output of the denied apply_patch. Codex streams: every answer is server-sent events, as the API sends them.
apply_patch is a freeform ("custom") tool for the models Codex knows (gpt-5.5 here), so the call is a
`custom_tool_call` whose input is the whole patch.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TARGET = sys.argv[1]
LOG = sys.argv[2]
PATCH = ("*** Begin Patch\n*** Update File: %s\n@@\n-hello world\n+goodbye world\n*** End Patch\n"
         % TARGET)


def called(items):
    """The call ids of the tool outputs the conversation carries."""
    return {i.get("call_id") for i in items
            if isinstance(i, dict) and i.get("type") in ("custom_tool_call_output", "function_call_output")}


def plan(body):
    """The next output item."""
    if "call_patch1" not in called(body.get("input") or []):
        return {"type": "custom_tool_call", "id": "ctc_patch1", "status": "completed",
                "call_id": "call_patch1", "name": "apply_patch", "input": PATCH}
    return {"type": "message", "role": "assistant", "id": "msg_done", "status": "completed",
            "content": [{"type": "output_text", "text": "The patch was refused; stopping.",
                         "annotations": []}]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, payload, content_type="application/json"):
        data = payload.encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply(404, json.dumps({"error": {"message": self.path, "type": "not_found"}}))

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with open(LOG, "a") as f:
            f.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if not self.path.endswith("/responses"):
            self.reply(404, json.dumps({"error": {"message": self.path, "type": "not_found"}}))
            return
        item = plan(body)
        usage = {"input_tokens": 10, "input_tokens_details": None, "output_tokens": 5,
                 "output_tokens_details": None, "total_tokens": 15}
        events = [
            ("response.created", {"type": "response.created", "response": {"id": "resp_fake"}}),
            ("response.output_item.done", {"type": "response.output_item.done", "item": item}),
            ("response.completed", {"type": "response.completed",
                                    "response": {"id": "resp_fake", "usage": usage}}),
        ]
        text = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events)
        self.reply(200, text, "text/event-stream")


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
