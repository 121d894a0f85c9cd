#!/usr/bin/env python3
"""A scripted stand-in for Anthropic's Messages API on 127.0.0.1, for tests/it/agent.rs
(claude_code_end_to_end_edit_denied): the model first asks to Read the file, then to Edit it, then ends.

Usage: fake_messages_api.py FILE LOG. Prints the port it listens on (one line) once it listens. Every
request body is appended to LOG as one JSON line, so the test reads what Claude Code sent back to the
"model": the tool result of the denied Edit. Requests of other kinds (no tools: titles, summaries) get a
short text answer. Streaming (`"stream": true`) is answered as server-sent events, as the API does.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TARGET = sys.argv[1]
LOG = sys.argv[2]


def tool_results(messages):
    """The names of the tools whose results the conversation carries, in order."""
    names = {}
    done = []
    for m in messages:
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if block.get("type") == "tool_use":
                names[block.get("id")] = block.get("name")
            if block.get("type") == "tool_result":
                done.append(names.get(block.get("tool_use_id")))
    return done


def plan(body):
    """The next assistant content blocks and the stop reason."""
    if not body.get("tools"):
        return [{"type": "text", "text": "ok"}], "end_turn"
    done = tool_results(body.get("messages", []))
    if "Read" not in done:
        return [{"type": "tool_use", "id": "toolu_read1", "name": "Read",
                 "input": {"file_path": TARGET}}], "tool_use"
    if "Edit" not in done:
        return [{"type": "tool_use", "id": "toolu_edit1", "name": "Edit",
                 "input": {"file_path": TARGET, "old_string": "hello", "new_string": "goodbye",
                           "replace_all": False}}], "tool_use"
    return [{"type": "text", "text": "The edit was refused; stopping."}], "end_turn"


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
        self.reply(404, json.dumps({"type": "error", "error": {"type": "not_found_error",
                                                               "message": self.path}}))

    def do_HEAD(self):
        self.reply(200, "")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with open(LOG, "a") as f:
            f.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if "count_tokens" in self.path:
            self.reply(200, json.dumps({"input_tokens": 100}))
            return
        if not self.path.startswith("/v1/messages"):
            self.reply(404, json.dumps({"type": "error", "error": {"type": "not_found_error",
                                                                   "message": self.path}}))
            return
        blocks, stop = plan(body)
        model = body.get("model", "claude-fake")
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if not body.get("stream"):
            self.reply(200, json.dumps({"id": "msg_fake", "type": "message", "role": "assistant",
                                        "model": model, "content": blocks, "stop_reason": stop,
                                        "stop_sequence": None, "usage": usage}))
            return
        events = [("message_start", {"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}})]
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": {"type": "text", "text": ""}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": b["text"]}}))
            else:
                start = dict(b, input={})
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": start}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "input_json_delta",
                                                                 "partial_json": json.dumps(b["input"])}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events.append(("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 5}}))
        events.append(("message_stop", {"type": "message_stop"}))
        text = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events)
        self.reply(200, text, "text/event-stream")


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
