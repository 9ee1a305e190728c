"""End-to-end: an agent's MCP session (the official Python SDK) whose server is killed mid-work
and restarted; the client names its handles again and finishes (issue 19, docs/durability.md).

Usage: mcp_resume.py CAIRN_BINARY EXAMPLE.cairn WORKDIR

1. A first server: open two sessions (odd_sum, main), expand one; the server is killed (SIGKILL).
2. A second server, a new client connection: the odd_sum handle comes back (same state digest)
   and its edit is admitted and written; the main handle pinned the file before that write, so
   it answers E-SESSION with the file and a hint to open again.
3. A third server dies (fault point `before-completion`) while writing a new session's edit:
   the change reached the file, the answer never reached the client.
4. A fourth server: the client resends the same request on the same handle and gets the first
   answer; the change is in the file once, the ledger completes it once, and `cairn check`
   accepts the program.
Prints one line per step; exits 1 on the first failed expectation.
"""

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp_common import expect, record_of


def edit(handle, kind, **fields):
    return {"request": dict({"protocol": "cairn.edit/2", "handle": handle, "kind": kind}, **fields)}


def server(cairn, workdir, env=None):
    pidfile = os.path.join(workdir, "server.pid")
    # `exec` keeps the shell's pid, so the pid file names the server itself.
    return StdioServerParameters(
        command="/bin/sh",
        args=["-c", f'echo $$ > "{pidfile}"; exec "{cairn}" mcp'],
        cwd=workdir,
        env=dict(os.environ, **(env or {})),
    ), pidfile


async def first_life(cairn, workdir, handles):
    params, pidfile = server(cairn, workdir)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            odd = record_of(await session.call_tool("edit_open", {"path": "hello.cairn", "symbol": "odd_sum"}))
            main = record_of(await session.call_tool("edit_open", {"path": "hello.cairn", "symbol": "main"}))
            handles["odd_sum"], handles["main"] = odd["handle"], main["handle"]
            expect(handles["odd_sum"] != handles["main"], "two sessions, two handles")
            state = record_of(await session.call_tool("edit_request", edit(handles["odd_sum"], "state")))
            handles["odd_sum_state"] = state["digest"]
            os.kill(int(open(pidfile).read().strip()), signal.SIGKILL)
            try:
                await asyncio.wait_for(session.call_tool("edit_request", edit(handles["main"], "state")), timeout=5)
            except BaseException:
                pass
    print("ok: the first server was killed mid-work", flush=True)


async def second_life(cairn, workdir, handles, target):
    params, _ = server(cairn, workdir)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            state = await session.call_tool("edit_request", edit(handles["odd_sum"], "state"))
            expect(not state.is_error, "the odd_sum handle came back after the restart")
            expect(record_of(state)["digest"] == handles["odd_sum_state"], "with the state it had")
            answer = await session.call_tool("edit_request", edit(handles["odd_sum"], "body", replacement="{ return n * n; }"))
            record = record_of(answer)
            expect(not answer.is_error and record["written"] == ["hello.cairn"], "its edit is admitted and written")
            expect("{ return n * n; }" in open(target, encoding="utf-8").read(), "the file holds the edit")
            stale = await session.call_tool("edit_request", edit(handles["main"], "state"))
            refusal = record_of(stale)
            expect(stale.is_error and refusal["code"] == "E-SESSION", "the main handle pinned the old file: E-SESSION")
            expect(refusal.get("files") == ["hello.cairn"] and "open a new session" in refusal["message"], "naming the file, with a hint to open again")


async def third_life(cairn, workdir, handles):
    params, _ = server(cairn, workdir, {"CAIRN_FAULT": "before-completion"})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            main = record_of(await session.call_tool("edit_open", {"path": "hello.cairn", "symbol": "main"}))
            handles["main2"] = main["handle"]
            died = False
            try:
                await asyncio.wait_for(
                    session.call_tool("edit_request", edit(handles["main2"], "body", replacement=MAIN_BODY)), timeout=20
                )
            except BaseException:
                died = True
            expect(died, "the third server died while completing the write (no answer came)")


MAIN_BODY = '{\n  println("hello again");\n  if odd_sum(3) != 9 { return 1; }\n  return 0;\n}'


async def fourth_life(cairn, workdir, handles, target):
    params, _ = server(cairn, workdir)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            answer = await session.call_tool("edit_request", edit(handles["main2"], "body", replacement=MAIN_BODY))
            record = record_of(answer)
            expect(not answer.is_error and record["written"] == ["hello.cairn"], "the resend is answered as admitted and written")
            text = open(target, encoding="utf-8").read()
            expect(text.count('println("hello again")') == 1, "the change is in the file once")
            again = record_of(await session.call_tool("edit_request", edit(handles["main2"], "body", replacement=MAIN_BODY)))
            expect(again == record, "a second resend gets the same first answer")
    ledger = [json.loads(line) for line in open(os.path.join(workdir, ".cairn", "ledger.jsonl"), encoding="utf-8")]
    completes = [r["key"] for r in ledger if r["kind"] == "complete"]
    expect(len(completes) == 2 and len(set(completes)) == 2, "the ledger completes each of the two writes once")


def main():
    cairn, example, workdir = (os.path.abspath(a) for a in sys.argv[1:4])
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    target = os.path.join(workdir, "hello.cairn")
    shutil.copy(example, target)
    handles = {}
    asyncio.run(first_life(cairn, workdir, handles))
    asyncio.run(second_life(cairn, workdir, handles, target))
    asyncio.run(third_life(cairn, workdir, handles))
    asyncio.run(fourth_life(cairn, workdir, handles, target))
    check = subprocess.run([cairn, "check", "hello.cairn"], cwd=workdir, capture_output=True, text=True)
    expect(check.returncode == 0, f"the finished program checks ({check.stdout.strip()[:200]})")
    print("all steps passed", flush=True)


if __name__ == "__main__":
    main()
