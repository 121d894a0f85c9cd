"""Latency of `git jules mcp` tools through the official Python MCP client, against the same commands as
whole CLI processes, in one run. Usage: mcp_latency.py GIT_JULES REPO PERSONA RUNS. Prints a table."""

import asyncio
import statistics
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def pct(samples, q):
    s = sorted(samples)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def row(name, samples):
    ms = [1000 * x for x in samples]
    print(f"{name:<34} p50 {pct(ms, .5):8.2f} ms   p95 {pct(ms, .95):8.2f} ms   mean {statistics.mean(ms):8.2f} ms")
    return pct(ms, .5), pct(ms, .95)


async def mcp_calls(binary, repo, persona, runs):
    params = StdioServerParameters(command=binary, args=["-C", repo, "mcp", "--persona", persona])
    out = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(5):  # warm: caches built, pages in
                await session.call_tool("mail_list", {"limit": 20})
            samples = []
            for _ in range(runs):
                t = time.perf_counter()
                r = await session.call_tool("mail_list", {"limit": 20})
                samples.append(time.perf_counter() - t)
                assert not getattr(r, "is_error", None), r.content
            out["list"] = samples
            samples = []
            for i in range(runs):
                t = time.perf_counter()
                r = await session.call_tool("mail_send", {"to": ["persona-01"], "subject": f"bench {i}", "body": "b"})
                samples.append(time.perf_counter() - t)
                assert not getattr(r, "is_error", None), r.content
            out["send"] = samples
    return out


def cli_calls(binary, repo, persona, runs):
    def timed(argv):
        t = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t

    base = [binary, "-C", repo, "--json"]
    for _ in range(5):
        timed(base + ["mail", "inbox", "--persona", persona, "--limit", "20"])
    lst = [timed(base + ["mail", "inbox", "--persona", persona, "--limit", "20"]) for _ in range(runs)]
    snd = [timed(base + ["mail", "send", "--from", persona, "--to", "persona-01", "--subject", f"cli {i}", "--body", "b"])
           for i in range(runs)]
    return {"list": lst, "send": snd}


def main():
    binary, repo, persona, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    m = asyncio.run(mcp_calls(binary, repo, persona, runs))
    c = cli_calls(binary, repo, persona, runs)
    m_list = row("mail_list (MCP, limit 20)", m["list"])
    c_list = row("mail inbox --limit 20 (process)", c["list"])
    m_send = row("mail_send (MCP)", m["send"])
    c_send = row("mail send (process)", c["send"])
    print(f"ratio MCP/process p50: list {m_list[0] / c_list[0]:.2f}x, send {m_send[0] / c_send[0]:.2f}x")
    print(f"mail_list p95 {m_list[1]:.2f} ms (target < 5 ms): {'ok' if m_list[1] < 5 else 'MISSED'}")


main()
