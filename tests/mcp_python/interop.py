"""Interop check of `git jules mcp` with the official Python MCP SDK (`pip install mcp`).

Usage: interop.py GIT_JULES_BINARY REPOSITORY. Run by tests/it/mcp.rs (`python_sdk_interop`): initialize,
list tools, send, list, read (marked read), claim, and a resources/updated notification of a message sent
by another process (waited for with a bound that only catches a hang; bench/mcp_notify.sh measures the
latency). Prints `interop ok` and exits 0 on success.
"""

import asyncio
import json
import os
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

INBOX = "jules://mail/inbox"


def structured(result):
    if getattr(result, "is_error", None) or getattr(result, "isError", None):
        raise AssertionError(f"tool error: {result.content}")
    value = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    if value is None:
        value = json.loads(result.content[0].text)
    return value


async def main(binary, repo):
    updated = asyncio.Event()

    async def on_message(message):
        inner = getattr(message, "root", message)
        if getattr(inner, "method", "") == "notifications/resources/updated":
            if str(inner.params.uri) == INBOX:
                updated.set()

    params = StdioServerParameters(
        command=binary, args=["-C", repo, "mcp", "--persona", "alice"], env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            init = await session.initialize()
            info = getattr(init, "server_info", None) or getattr(init, "serverInfo", None)
            assert info.name == "git-jules", info
            tools = {t.name for t in (await session.list_tools()).tools}
            for want in ("mail_send", "mail_list", "mail_read", "mail_claim", "mail_sync"):
                assert want in tools, f"missing {want}: {sorted(tools)}"

            sent = structured(await session.call_tool(
                "mail_send", {"to": ["alice"], "subject": "from python", "body": "hello"}))
            msg_id = sent["id"]
            listed = structured(await session.call_tool("mail_list", {"unread": True}))
            assert [m["id"] for m in listed["messages"]] == [msg_id], listed

            read = structured(await session.call_tool("mail_read", {"id": msg_id[:10]}))
            assert read["message"]["body"] == "hello", read
            listed = structured(await session.call_tool("mail_list", {"unread": True}))
            assert listed["messages"] == [], "read marks the message read"

            task = subprocess.run(
                [binary, "-C", repo, "mail", "send", "--from", "boss", "--to", "workers",
                 "--subject", "a task", "--body", "t"],
                check=True, capture_output=True, text=True).stdout.strip()
            claim = structured(await session.call_tool("mail_claim", {"id": task}))
            assert "alice" in json.dumps(claim), claim

            bad = await session.call_tool("mail_read", {"id": "ffffffff"})
            assert getattr(bad, "is_error", None) or getattr(bad, "isError", None), "an unknown id is a tool error"

            await session.subscribe_resource(INBOX)
            start = time.monotonic()
            subprocess.run(
                [binary, "-C", repo, "mail", "send", "--from", "bob", "--to", "alice",
                 "--subject", "ping", "--body", "p"], check=True, capture_output=True)
            await asyncio.wait_for(updated.wait(), timeout=120.0)
            print(f"notified {1000 * (time.monotonic() - start):.1f} ms after the other process's send")
            content = await session.read_resource(INBOX)
            assert "ping" in content.contents[0].text
    print("interop ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
