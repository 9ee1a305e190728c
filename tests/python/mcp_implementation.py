"""End-to-end: an implementation session driven through `cairn mcp` by the official MCP Python SDK.

Usage: mcp_implementation.py CAIRN_BINARY WORKDIR

The scenario (issue 17): open an implementation session on a reference, have keys that reach the pinned parts
refused before anything is compiled, a test block refused, a condition that could trap refused by
the compiler inside the submission, a subtly wrong implementation refused E-VALIDATION with its
shrunk failing input (kept in the regressions file), a correct one validated and selectable, and
a second session asking another policy than the one the regressions file pinned refused; then a
plan session: a function without a region refused, a reply out of range E-PLAN, one admitted.
Prints one line per step; exits 1 on the first failed expectation.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp_common import expect, record_of

PROGRAM = """fn total(n:usize, xs:ro<u32>[n]) -> u64 {
  let mut h:u64 = 0;
  for i in 0..n { h = h + u64(xs[i]); }
  return h;
}

fn fill(n:usize, out:rw<u64>[n]) {
  parallel i in n { out[i] = u64(i); }
}

fn main() -> i32 { return 0; }
"""

WRONG = """fn total_pairs(n:usize, xs:ro<u32>[n]) -> u64 implements total when n % 2 == 0 {
  let mut h:u64 = 0;
  for k in 0..n / 2 { h = h + pair(xs[2 * k], xs[2 * k + 1]); }
  return h;
}

fn pair(a:u32, b:u32) -> u64 {
  if a > 4000000000 { return u64(a) + u64(b) + 1; }
  return u64(a) + u64(b);
}"""

RIGHT = """fn total_pairs(n:usize, xs:ro<u32>[n]) -> u64 implements total when n % 2 == 0 {
  let mut h:u64 = 0;
  for k in 0..n / 2 { h = h + u64(xs[2 * k]) + u64(xs[2 * k + 1]); }
  return h;
}"""


def submit(handle, source, **extra):
    request = {"protocol": "cairn.implementation/1", "handle": handle, "kind": "submit", "source": source}
    request.update(extra)
    return {"request": request}


async def main(cairn, workdir):
    os.makedirs(workdir, exist_ok=True)
    with open(os.path.join(workdir, "total.cairn"), "w") as f:
        f.write(PROGRAM)
    params = StdioServerParameters(command=cairn, args=["mcp"], cwd=workdir)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            expect("implementation_open" in names and "implementation_submit" in names, "the implementation tools are listed")

            opened = await session.call_tool("implementation_open", {"path": "total.cairn", "reference": "total"})
            packet = record_of(opened)
            expect(not opened.is_error and packet["protocol"] == "cairn.implementation/1", "a packet")
            handle = packet["handle"]
            expect(packet["reference"]["symbol"] == "total" and "fn total" in packet["reference"]["source"], "the reference is shown")
            expect(len(packet["pinned"]["reference_sha256"]) == 64 and "tolerance_sha256" in packet["pinned"], "the pins")
            expect(packet["reply"]["kind"] == "submit" and "implements total" in packet["reply"]["source"], "the reply to fill")

            refused = record_of(await session.call_tool("implementation_submit", submit(handle, RIGHT, tolerance={"absolute": 1})))
            expect(refused["code"] == "E-TOLERANCE", "a tolerance key is E-TOLERANCE")
            refused = record_of(await session.call_tool("implementation_submit", submit(handle, RIGHT, budget=3)))
            expect(refused["code"] == "E-TEST-POLICY", "a budget key is E-TEST-POLICY")
            refused = record_of(await session.call_tool("implementation_submit", submit(handle, RIGHT + "\ntest t { assert(true); }")))
            expect(refused["code"] == "E-TEST-POLICY", "a test block is E-TEST-POLICY")
            trapping = RIGHT.replace("when n % 2 == 0", "when n + 1 > 2")
            refused = record_of(await session.call_tool("implementation_submit", submit(handle, trapping)))
            expect(refused["code"] == "E-IMPL-WHEN" and refused.get("in") == "reply" and refused["line"] == 1,
                   f"a trapping condition is E-IMPL-WHEN, located in the submission ({refused.get('line')})")

            wrong = await session.call_tool("implementation_submit", submit(handle, WRONG))
            refused = record_of(wrong)
            expect(wrong.is_error and refused["code"] == "E-VALIDATION", "a subtly wrong implementation is E-VALIDATION")
            inputs = refused["failed"]["inputs"]
            expect(inputs["extent"] == 2 and inputs["pattern"] == "maximum", f"the shrunk failing input ({json.dumps(inputs)})")
            kept = os.path.join(workdir, "regressions", "total.json")
            expect(os.path.exists(kept), "the failing case is kept in the regressions file")
            with open(kept) as f:
                expect(json.load(f)["cases"][0]["case"] == inputs, "the kept case is the shrunk one")

            right = await session.call_tool("implementation_submit", submit(handle, RIGHT))
            answer = record_of(right)
            expect(not right.is_error and answer["status"] == "validated", "a correct implementation is validated")
            expect(answer["select_with"] == "plan total use total_pairs;" and answer["selected"] is False, "selectable, not selected")
            expect(answer["finite"]["implementation_ran"] > 0 and answer["evidence"] == "finite-tested", "validated on cases that ran it")
            expect(len(answer["identity"]) == 64 and answer["written"] == ["total.cairn"], "its identity; written into the file")
            with open(os.path.join(workdir, "total.cairn")) as f:
                text = f.read()
            expect("implements total" in text and "plan total use" not in text, "the implementation is written after the reference, not selected")
            with open(os.path.join(workdir, ".cairn", "history", "records.jsonl")) as f:
                kinds = [json.loads(line)["kind"] for line in f]
            expect("failure" in kinds and "validation" in kinds, f"both submissions are in the candidate history ({kinds})")

            other = await session.call_tool("implementation_open", {"path": "total.cairn", "reference": "total", "policy": {"budget": 5}})
            expect(other.is_error and record_of(other)["code"] == "E-TEST-POLICY", "another policy than the pinned one is E-TEST-POLICY")

            # An edit session reads the emitted code of what it disclosed.
            edit = record_of(await session.call_tool("edit_open", {"path": "total.cairn", "symbol": "total"}))
            explained = await session.call_tool("edit_request", {"request": {"protocol": "cairn.edit/2", "handle": edit["handle"], "kind": "explain"}})
            cost = record_of(explained)
            expect(not explained.is_error and cost["protocol"] == "cairn.explain/1" and cost["functions"]["total"]["loops"] >= 1,
                   "an edit session's explain reads the emitted code")

            # A plan session: items and whole numbers only.
            refused = await session.call_tool("plan_open", {"path": "total.cairn", "symbol": "total"})
            expect(refused.is_error and record_of(refused)["code"] == "E-PLAN", "a function without a region has no plan")
            opened = await session.call_tool("plan_open", {"path": "total.cairn", "symbol": "fill"})
            packet = record_of(opened)
            expect(not opened.is_error and packet["items"]["lanes"]["most"] == 1024, "a plan packet with the items' ranges")
            reply = dict(packet["reply"])
            reply["items"] = {"lanes": 5000}
            out_of_range = await session.call_tool("plan_reply", {"reply": reply})
            expect(out_of_range.is_error and record_of(out_of_range)["code"] == "E-PLAN", "a plan reply out of range is E-PLAN")
            reply["items"] = {"lanes": 2, "grain": 4096}
            admitted = record_of(await session.call_tool("plan_reply", {"reply": reply}))
            expect(admitted["status"] == "admitted" and admitted["plan"] == "plan fill { grain 4096; lanes 2; }", "an admitted plan")
            expect(admitted["written"] == ["total.cairn"], "written into the file")
            with open(os.path.join(workdir, "total.cairn")) as f:
                text = f.read()
            expect("plan fill { grain 4096; lanes 2; }" in text and "implements total" in text, "the plan is in the file beside the implementation")
            checked = record_of(await session.call_tool("check", {"path": "total.cairn"}))
            expect(checked["status"] == "typed", "the written program checks")
            again = await session.call_tool("plan_reply", {"reply": reply})
            expect(again.is_error and record_of(again)["code"] == "E-SESSION", "an answered session is spent")
    print("all steps passed", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
