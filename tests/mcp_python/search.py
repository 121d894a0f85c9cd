"""`mail_search` of `git jules mcp` through the official Python MCP SDK (`pip install mcp`).

Usage: search.py GIT_JULES_BINARY REPOSITORY ID_TO_CURATOR ID_FROM_CURATOR. Run by tests/it/search.rs
(`mcp_mail_search_through_the_python_sdk`) on its four-message corpus: as curator the tool finds what
curator received and not what it sent, its hits are those of `mail search --persona curator --json`, and a
bad query is a tool error naming the position with exit 2. Prints `search ok` on success.
"""

import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def is_error(result):
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def structured(result):
    if is_error(result):
        raise AssertionError(f"tool error: {result.content}")
    value = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    if value is None:
        value = json.loads(result.content[0].text)
    return value


async def main(binary, repo, to_curator, from_curator):
    params = StdioServerParameters(
        command=binary, args=["-C", repo, "mcp", "--persona", "curator"], env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert "mail_search" in tools, sorted(tools)
            tool = tools["mail_search"]
            schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None)
            assert "query" in schema["properties"], schema
            assert "persona" not in schema["properties"], "the server's persona is fixed"

            found = structured(await session.call_tool("mail_search", {"query": "quokka"}))
            assert found["version"] == 1, found
            assert [h["id"] for h in found["hits"]] == [to_curator], found
            assert found["persona"] == "curator", found
            sent = structured(await session.call_tool("mail_search", {"query": "parser"}))
            assert sent["hits"] == [], "curator's own message is not in its mailbox"

            cli = json.loads(subprocess.run(
                [binary, "-C", repo, "--json", "mail", "search", "quokka", "--persona", "curator"],
                check=True, capture_output=True, text=True).stdout)
            for doc in (cli, found):
                doc.pop("index")
            assert cli == found, (cli, found)

            bad = await session.call_tool("mail_search", {"query": "(quokka"})
            assert is_error(bad), bad
            text = bad.content[0].text
            assert "character 8" in text and "expected" in text, text
            value = getattr(bad, "structured_content", None) or getattr(bad, "structuredContent", None)
            assert value["exit"] == 2, value

            unknown = await session.call_tool("mail_search", {"query": "x", "persona": "weaver"})
            assert is_error(unknown), "no persona argument: a persona acts only as itself"
    print("search ok")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
