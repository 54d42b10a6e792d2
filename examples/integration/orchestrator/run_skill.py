#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""run_skill.py BUNDLE DIGEST TENANT EXECUTION-ID [INPUT]...

The worker of run-skill.sh in Python, standard library only
(skillrun-integration(7), ORCHESTRATORS): run the bundle only if it has
the pinned digest, under the orchestrator's tenant and execution id, read
the audit stream from a pipe of its own as it comes (never from the run
directory's layout), and print the outcome as one JSON line:
  {"execution_id", "status", "exit_code", "reason", "run_dir",
   "artifacts": [{"path", "size", "sha256", "mode"}], "audit"}
(and "path_base64", the name's raw bytes, where "path" is escaped).
The stream is kept, one event per line, in the file the line names;
"audit_invalid" is added to the status when its chain does not verify.
A usage error (exit status 125) writes no stream at all: status error,
reason usage, "audit" null.  SIGTERM, SIGINT or SIGHUP sent to this
worker is passed on to skillrun, which cancels the run with its record
(status cancelled, exit status 128+N); the worker waits for it and
reports that outcome.  One that comes before skillrun is started stops
the worker: nothing runs, and the line says cancelled, with no run.
Exits with skillrun's exit status.  SKILLRUN and SKILLRUN_WORKSPACE_ROOT
may be set in the environment; a request on this program's standard
input is forwarded to the skill when SKILLRUN_STDIN=1.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile

# Without execution_completed, skillrun's own exit status says what it can.
STATUS_OF_EXIT = {123: "refused", 124: "timeout", 125: "error"}


class Forwarder:
    """SIGTERM, SIGINT and SIGHUP (Popen.terminate(), a supervisor's stop)
    passed on to skillrun, which cancels the run and records it: stopping
    only the worker would leave the run going on, unreported.  One that
    comes before skillrun is started is kept in `pending`.  skillrun runs
    in a session of its own, so that a signal sent to the worker's process
    group (Ctrl-C, timeout(1)) reaches it once, from here: the same signal
    twice would cut the skill's kill-grace short (skillrun(1), EXIT
    STATUS)."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

    def __init__(self):
        self.proc = None
        self.pending = None
        for sig in self.SIGNALS:
            # A SIGHUP ignored by whoever started the worker (nohup) stays
            # ignored, as skillrun keeps it (skillrun(1), EXIT STATUS).
            if sig == signal.SIGHUP and \
                    signal.getsignal(sig) == signal.SIG_IGN:
                continue
            signal.signal(sig, self.handle)

    def handle(self, sig, frame):
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(sig)
        elif self.proc is None:
            self.pending = sig

    def started(self, proc):
        self.proc = proc
        # A signal that came while skillrun was being started.
        if self.pending is not None:
            proc.send_signal(self.pending)


def run(bundle, digest, tenant, execution_id, inputs, forwarder):
    skillrun = os.environ.get("SKILLRUN", "skillrun")
    cmd = [skillrun, "--expect-sha256", digest, "--tenant", tenant,
           "--execution-id", execution_id]
    root = os.environ.get("SKILLRUN_WORKSPACE_ROOT")
    if root:
        cmd += ["--workspace-root", root]
    for path in inputs:
        cmd += ["-i", path]
    forward = os.environ.get("SKILLRUN_STDIN") == "1"
    if forward:
        cmd.append("--stdin")
    # A relative bundle path starting with "-" must not pass for an option.
    if not bundle.startswith(("/", "./", "../")):
        bundle = "./" + bundle
    read_end, write_end = os.pipe()
    cmd += ["--audit-fd", str(write_end), bundle]
    fd, audit_path = tempfile.mkstemp(prefix="skillrun-audit.")
    if forwarder.pending is not None:
        # Stopped before skillrun started: nothing runs.
        os.close(fd)
        os.unlink(audit_path)
        os.close(read_end)
        os.close(write_end)
        return 128 + forwarder.pending, [], None
    events = []
    with os.fdopen(fd, "wb") as audit, \
            subprocess.Popen(cmd, pass_fds=(write_end,),
                             stdin=None if forward else subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL,
                             start_new_session=True) as proc:
        forwarder.started(proc)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as stream:
            for line in stream:
                audit.write(line)
                try:
                    events.append(json.loads(line))
                except ValueError:
                    pass  # a line cut short: the chain check reports it
        # Reading and waiting go on after a forwarded signal (PEP 475).
        rc = proc.wait()
    if rc < 0:
        rc = 128 - rc  # killed by a signal: as a shell says it
    if rc == 125 and not events and os.path.getsize(audit_path) == 0:
        # A usage error writes no stream (skillrun(1), EXIT STATUS 125):
        # nothing to verify or to keep.
        os.unlink(audit_path)
        audit_path = None
    return rc, events, audit_path


def last(events, name):
    found = [e for e in events if e.get("event") == name]
    return found[-1] if found else {}


def outcome(rc, events, audit_path):
    done = last(events, "execution_completed")
    if audit_path is None:
        # No stream: a usage error, or stopped before skillrun started.
        return ("error", "usage", []) if rc == 125 else ("cancelled", None, [])
    status = done.get("status") or STATUS_OF_EXIT.get(rc, "unknown")
    failure = last(events, "layer_failed")
    reason = (last(events, "bundle_rejected").get("reason")
              or last(events, "input_rejected").get("reason")
              or last(events, "error").get("reason")
              or (failure and f"layer_failed:{failure['layer']}")
              or last(events, "limit_exceeded").get("limit")
              or done.get("exec_error"))
    listed = done.get("artifacts", {})
    if listed.get("truncated") is False:
        artifacts = listed["list"]
    else:
        # As the list has them: path_base64 only where path is escaped.
        keys = ("path", "path_base64", "size", "sha256", "mode")
        artifacts = [{k: e[k] for k in keys if k in e}
                     for e in events if e.get("event") == "artifact_committed"]
    return status, reason, artifacts


def main(argv):
    if len(argv) < 5:
        print(f"usage: {argv[0]} BUNDLE DIGEST TENANT EXECUTION-ID [INPUT]...",
              file=sys.stderr)
        return 2
    bundle, digest, tenant, execution_id = argv[1:5]
    forwarder = Forwarder()
    rc, events, audit_path = run(bundle, digest, tenant, execution_id,
                                 argv[5:], forwarder)
    status, reason, artifacts = outcome(rc, events, audit_path)
    # A stream that does not verify is reported, whatever the run did.
    if audit_path is not None and subprocess.run(
            [os.environ.get("SKILLRUN", "skillrun"), "--verify-audit",
             audit_path],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
        status += ",audit_invalid"
    print(json.dumps({
        "execution_id": execution_id, "status": status, "exit_code": rc,
        "reason": reason,
        "run_dir": last(events, "execution_started").get("run_dir"),
        "artifacts": artifacts, "audit": audit_path}, separators=(",", ":")))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
