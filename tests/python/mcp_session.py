"""End-to-end: drive `cairn mcp` with the official MCP Python SDK, as an agent's client would.

Usage: mcp_session.py CAIRN_BINARY EXAMPLE.cairn WORKDIR

The scenario (issue 5): initialize, list the tools, open an edit session on a file, send a refused
edit (the file must not change), an admitted one (written once), ask for the state before and
after (the second answer is a delta), check a second edit of the written session is refused, then
`cairn undo` restores the file. A second server is killed while it writes back (a test hook makes
it pause after the rename); the file is whole either way, and the next journal user rolls the
interrupted write back. Prints one line per step; exits 1 on the first failed expectation.
"""

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp_common import expect, record_of

# The tools that answer today; plan sessions are not listed until they do.
TOOLS = [
    "check",
    "edit_open",
    "edit_request",
    "plan_open",
    "plan_reply",
    "implementation_open",
    "implementation_submit",
    "state",
    "find",
]


def body_request(handle, replacement):
    return {"protocol": "cairn.edit/2", "handle": handle, "kind": "body", "replacement": replacement}


async def main_session(cairn, workdir, original):
    target = os.path.join(workdir, "hello.cairn")
    params = StdioServerParameters(command=cairn, args=["mcp"], cwd=workdir)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            expect(init.server_info.name == "cairn", "serverInfo names cairn")
            expect(
                init.protocol_version in ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"),
                f"a supported protocol version ({init.protocol_version})",
            )
            tools = await session.list_tools()
            expect([t.name for t in tools.tools] == TOOLS, "the offered tools in order")
            expect(bool(init.instructions) and "edit_open" in init.instructions, "the server gives instructions")

            state = await session.call_tool("state", {"path": "hello.cairn"})
            whole = record_of(state)
            expect(not state.is_error and whole["protocol"] == "cairn.state/1", "a whole state first")

            opened = await session.call_tool("edit_open", {"path": "hello.cairn", "symbol": "odd_sum"})
            packet = record_of(opened)
            expect(not opened.is_error, "edit_open succeeds")
            expect(packet["protocol"] == "cairn.packet/2" and packet["write_back"] == "hello.cairn", "a focused packet that writes back")
            handle = packet["handle"]

            refused = await session.call_tool("edit_request", {"request": body_request(handle, "{ return n > 1; }")})
            answer = record_of(refused)
            expect(refused.is_error and answer["code"] == "E-TYPE-MISMATCH", "a wrong body is refused with its code")
            expect(answer.get("in") == "reply" and answer["line"] == 1, "the refusal is located in the reply")
            expect(open(target, encoding="utf-8").read() == original, "a refused edit never touches the file")

            refused = await session.call_tool("edit_request", {"request": {"protocol": "cairn.edit/2", "handle": handle, "kind": "body"}})
            expect(refused.is_error and record_of(refused)["code"] == "E-REQUEST", "a malformed request is E-REQUEST")

            # A body that no longer traps: the row shrinks, which the state delta must show.
            admitted = await session.call_tool("edit_request", {"request": json.dumps(body_request(handle, "{ return n; }"))})
            answer = record_of(admitted)
            expect(not admitted.is_error and answer["status"] == "typed", "a right body is admitted")
            expect(answer["effects"] == [] and answer["written"] == ["hello.cairn"], "the admission gives the row and the written file")
            now = open(target, encoding="utf-8").read()
            expect(now != original and "{ return n; }" in now, "the admitted body is on disk")

            journal = os.path.join(workdir, ".cairn", "journal")
            writes = [n for n in os.listdir(journal) if n.endswith(".write.json")]
            expect(len(writes) == 1, "the file was written exactly once")

            again = await session.call_tool("edit_request", {"request": body_request(handle, "{ return n * n; }")})
            expect(again.is_error and record_of(again)["code"] == "E-SESSION", "a written session cannot write again")
            expect(open(target, encoding="utf-8").read() == now, "the refused second write left the file")

            delta = await session.call_tool("state", {"path": "hello.cairn"})
            answer = record_of(delta)
            expect(answer["protocol"] == "cairn.state-delta/1" and answer["since"] == whole["digest"], "the second state is a delta")
            expect(answer["modules"] == {"": {"odd_sum": ["fn odd_sum(n:u32) -> u32", []]}}, "the delta names the edited function's new row")

    undo = subprocess.run([cairn, "undo", "hello.cairn", "--format", "json"], cwd=workdir, capture_output=True, text=True)
    expect(undo.returncode == 0, f"cairn undo succeeds ({undo.stdout.strip()})")
    expect(open(target, encoding="utf-8").read() == original, "cairn undo restores the file")


async def killed_session(cairn, workdir, original):
    target = os.path.join(workdir, "hello.cairn")
    pidfile = os.path.join(workdir, "server.pid")
    env = dict(os.environ, CAIRN_WRITEBACK_PAUSE_MS="5000")
    # `exec` keeps the shell's pid, so the pid file names the server itself.
    params = StdioServerParameters(
        command="/bin/sh", args=["-c", f'echo $$ > "{pidfile}"; exec "{cairn}" mcp'], cwd=workdir, env=env
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            opened = record_of(await session.call_tool("edit_open", {"path": "hello.cairn", "symbol": "odd_sum"}))
            request = body_request(opened["handle"], "{ return n * n; }")
            pending = asyncio.ensure_future(session.call_tool("edit_request", {"request": request}))
            deadline = time.time() + 20
            while open(target, encoding="utf-8").read() == original and time.time() < deadline:
                await asyncio.sleep(0.02)
            written = open(target, encoding="utf-8").read()
            expect(written != original and "{ return n * n; }" in written, "the server renamed the new file in")
            os.kill(int(open(pidfile).read().strip()), signal.SIGKILL)
            try:
                await asyncio.wait_for(pending, timeout=10)
            except BaseException:
                pass
    now = open(target, encoding="utf-8").read()
    expect(now in (original, written), "after the kill the file is whole: before or after, never torn")
    # Recovery rule (docs/security.md, issue 19): a pending write-back whose files all hold their
    # new content happened; the next journal user completes it, so undo reverts it like any other.
    undo = subprocess.run([cairn, "undo", "hello.cairn", "--format", "json"], cwd=workdir, capture_output=True, text=True)
    expect(undo.returncode == 0 and '"undone"' in undo.stdout, "the interrupted write was completed, and undo reverts it")
    expect(open(target, encoding="utf-8").read() == original, "after undo the file is the original")
    again = subprocess.run([cairn, "undo", "hello.cairn", "--format", "json"], cwd=workdir, capture_output=True, text=True)
    expect(again.returncode == 1 and "E-SESSION" in again.stdout, "and nothing is left to undo")


def main():
    cairn, example, workdir = sys.argv[1], sys.argv[2], sys.argv[3]
    for run in (main_session, killed_session):
        shutil.rmtree(workdir, ignore_errors=True)
        os.makedirs(workdir)
        shutil.copy(example, os.path.join(workdir, "hello.cairn"))
        original = open(example, encoding="utf-8").read()
        asyncio.run(run(cairn, workdir, original))
    print("all steps passed", flush=True)


if __name__ == "__main__":
    main()
