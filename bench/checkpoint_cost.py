#!/usr/bin/env python3
"""What a session checkpoint costs an agent: `edit_open` of path sessions over `cairn mcp`, side by
side with checkpoints on and off (off: `.cairn/sessions` is a plain file, so the server cannot keep
tables and says so), three alternating rounds of N opens each.

    python3 bench/checkpoint_cost.py target/release/cairn [N]

Every open adds a session to the table (the host keeps 256), so a larger N measures larger tables.
"""
import json, os, shutil, subprocess, sys, tempfile, time

cairn = os.path.abspath(sys.argv[1])
N = int(sys.argv[2]) if len(sys.argv) > 2 else 300
src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "hello.cairn")).read()
scratch = tempfile.mkdtemp(prefix="cairn-checkpoint-cost-")
def run(readonly):
    d = os.path.join(scratch, "off" if readonly else "on")
    shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    open(f"{d}/hello.cairn", "w").write(src)
    if readonly:
        os.makedirs(f"{d}/.cairn"); open(f"{d}/.cairn/sessions", "w").write("not a directory")
    p = subprocess.Popen([cairn, "mcp"], cwd=d, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    def call(i, name, args):
        p.stdin.write(json.dumps({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":name,"arguments":args}})+"\n"); p.stdin.flush()
        return json.loads(p.stdout.readline())
    call(0, "check", {"path": "hello.cairn"})
    times = []
    for i in range(N):
        t = time.perf_counter()
        r = call(i + 1, "edit_open", {"path": "hello.cairn", "symbol": "odd_sum" if i % 2 else "main"})
        times.append((time.perf_counter() - t) * 1000)
        assert not r["result"].get("isError"), r
    p.stdin.close(); p.wait()
    err = p.stderr.read()
    tables = os.listdir(f"{d}/.cairn/sessions") if os.path.isdir(f"{d}/.cairn/sessions") else []
    return times, err.strip()[:200], tables
res = {}
for round_ in range(3):
    for ro in (False, True):
        t, err, tables = run(ro)
        res.setdefault(ro, []).extend(t)
        if round_ == 0:
            print("off" if ro else "on ", "stderr:", err or "-", "| files in .cairn/sessions:", len(tables))
for ro in (False, True):
    t = sorted(res[ro]); n = len(t)
    print(f"{'off' if ro else 'on ':3s} edit_open p50 {t[n//2]:.3f} ms  p90 {t[int(n*0.9)]:.3f} ms  n={n}")
shutil.rmtree(scratch, ignore_errors=True)
