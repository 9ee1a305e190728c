"""What the SDK clients share (mcp_session.py, mcp_resume.py): one line per expectation, and the
record a tool call answers with."""

import json
import sys


def expect(condition, what):
    """Prints `ok: what`, or `FAILED: what` and exits 1."""
    if not condition:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


def record_of(result):
    """The record of a tool call's result: its one text content block, as JSON."""
    expect(len(result.content) == 1 and result.content[0].type == "text", "one text content block")
    return json.loads(result.content[0].text)
