#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes the audit fixtures next to this file.

An implementation of the skillrun.audit/1 chain independent of src/audit.c:
tests/unit/test-audit.c checks that the C emitter writes good.jsonl byte for
byte from the same events, and that the C verifier rejects each bad-*.jsonl
at the line named in bad.list.  Run it again after changing the events.
"""
import hashlib
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ZERO = "0" * 64
TS = "2025-01-02T03:04:05.678901Z"
EID = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
TENANT = "acme"

# (event, skill, version, fields) in emit order; test-audit.c repeats these.
EVENTS = [
    ("execution_started", None, None,
     {"argv": ["skillrun", "--tenant", "acme", "pdf-tools", "--", "python3",
               "x.py"], "uid": 1000}),
    ("bundle_verified", "pdf-tools", "1.2.0",
     {"digest": "sha256:" + "ab" * 32, "files": 3, "dirs": 1, "bytes": 2048}),
    ("policy_resolved", "pdf-tools", "1.2.0",
     {"limits": {"memory": {"value": 536870912, "enforced_by": "cgroup"},
                 "cpu_seconds": {"value": 60, "enforced_by": "cgroup"}},
      "network": "deny"}),
    ("warning", "pdf-tools", "1.2.0",
     {"message": "SKILL.md:4: unknown top-level key 'tags'"}),
    ("warning", "pdf-tools", "1.2.0",
     {"message": "na\u00efve \u65e5\u672c\t\"quoted\"\n{\"event\":\"forged\"}"}),
    ("artifact_committed", "pdf-tools", "1.2.0",
     {"path": "outputs/report.pdf", "size": 1234, "sha256": "cd" * 32}),
    ("execution_completed", "pdf-tools", "1.2.0",
     {"status": "succeeded", "exit_code": 0, "signal": None,
      "duration_ms": 1520}),
]


def line(seq, event, skill, version, fields, prev, over=None):
    obj = {"schema": "skillrun.audit/1", "ts": TS, "seq": seq, "event": event,
           "execution_id": EID, "tenant_id": TENANT, "skill": skill,
           "version": version, "prev": prev}
    obj.update(over or {})
    obj.update(fields)
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) +
            "\n").encode()


def chain(events, over_at=None):
    """Lines with a correct chain; over_at={3: {...}} overrides keys."""
    over_at = over_at or {}
    out, prev = [], ZERO
    for seq, (event, skill, version, fields) in enumerate(events):
        ln = line(seq, event, skill, version, fields, prev,
                  over_at.get(seq))
        out.append(ln)
        prev = hashlib.sha256(ln).hexdigest()
    return out


def write(name, lines):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(b"".join(lines))


good = chain(EVENTS)
write("good.jsonl", good)

bad = []  # (file, line the verifier must name)
write("bad-removed.jsonl", good[:2] + good[3:]); bad.append(("bad-removed.jsonl", 3))
edited = bytearray(good[3])
edited[edited.index(b"tags")] = ord("T")
write("bad-edited.jsonl", good[:3] + [bytes(edited)] + good[4:])
bad.append(("bad-edited.jsonl", 5))
write("bad-reordered.jsonl", good[:1] + [good[2], good[1]] + good[3:])
bad.append(("bad-reordered.jsonl", 2))
write("bad-seq.jsonl", chain(EVENTS, {4: {"seq": 7}}))
bad.append(("bad-seq.jsonl", 5))
write("bad-schema.jsonl", chain(EVENTS, {0: {"schema": "skillrun.audit/2"}}))
bad.append(("bad-schema.jsonl", 1))
write("bad-ts.jsonl", chain(EVENTS, {2: {"ts": "2025-01-02 03:04:05Z"}}))
bad.append(("bad-ts.jsonl", 3))
write("bad-execution-id.jsonl", chain(EVENTS, {5: {"execution_id": "other"}}))
bad.append(("bad-execution-id.jsonl", 6))
# Stopped short, not broken: a writer that died mid-line, or before the
# final execution_completed; the verifier says "incomplete" (exit 2).
short = []  # (file, line the verifier must name)
write("incomplete-cut-line.jsonl", good[:-1] + [good[-1][:40]])
short.append(("incomplete-cut-line.jsonl", 7))
write("incomplete-no-final-newline.jsonl", good[:-1] + [good[-1][:-1]])
short.append(("incomplete-no-final-newline.jsonl", 7))
write("incomplete-empty.jsonl", []); short.append(("incomplete-empty.jsonl", 1))
write("incomplete-no-completion.jsonl", good[:-1])
short.append(("incomplete-no-completion.jsonl", 6))
# A line after execution_completed, chained as the writer would have.
after = chain(EVENTS + [("warning", "pdf-tools", "1.2.0", {"message": "late"})])
write("bad-after-completed.jsonl", after)
bad.append(("bad-after-completed.jsonl", 8))
write("bad-blank-line.jsonl", good[:2] + [b"\n"] + good[2:])
bad.append(("bad-blank-line.jsonl", 3))
# A line inserted with a valid-looking seq and prev (what a forged line
# printed by a skill would need) shifts the next genuine line.
forged = line(4, "execution_completed", "pdf-tools", "1.2.0",
              {"status": "succeeded"}, hashlib.sha256(good[3]).hexdigest())
write("bad-forged.jsonl", good[:4] + [forged] + good[4:])
bad.append(("bad-forged.jsonl", 6))
dup = line(0, "execution_started", None, None, {}, ZERO).replace(
    b'"event":"execution_started"',
    b'"event":"execution_started","event":"bundle_verified"')
write("bad-duplicate-key.jsonl", [dup]); bad.append(("bad-duplicate-key.jsonl", 1))
write("bad-not-json.jsonl", good[:1] + [b"\x1b[31mnot json\n"] + good[2:])
bad.append(("bad-not-json.jsonl", 2))
write("bad-missing-prev.jsonl", [good[0].replace(b',"prev":"' + ZERO.encode() + b'"', b"")])
bad.append(("bad-missing-prev.jsonl", 1))

for listname, entries in (("bad.list", bad), ("incomplete.list", short)):
    with open(os.path.join(HERE, listname), "w") as f:
        f.write("# file  line-the-verifier-names (written by gen.py)\n")
        for name, n in entries:
            f.write(f"{name} {n}\n")
