#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Validates skillrun audit lines and metadata.json against schema/.

  schema-check.py --self-check
      the schemas are valid draft 2020-12, audit.schema.json's event list,
      its if/then dispatch and its $defs name the same events, and no
      event's own keys are named like a common key
  schema-check.py --scan DIR [--skip PATH]...
      everything a test left under DIR: every line that starts like an
      audit line ({"schema":"skillrun.audit/...) in any file (a file whose
      first line is one must hold nothing else), and every JSON file whose
      schema is skillrun.metadata/... (a run directory's metadata.json must
      have its result).  A run directory's logs/, outputs/ and staging/
      hold what the skill wrote and are not read.
  schema-check.py --audit FILE...
  schema-check.py --metadata [--sandbox | --final] FILE...

Prints one line per problem, "FILE:LINE: [EVENT: ]PATH: MESSAGE", then a
summary line; exits 0 when everything is valid, 1 when not, 2 on a usage
error, 3 when python3-jsonschema (4.x, draft 2020-12) is missing and 4
on an internal error.
Importing jsonschema alone costs 0.15 - 0.3 s: run once per test script,
not once per run.
"""

import argparse
import json
import os
import sys
import types

AUDIT_PREFIX = b'{"schema":"skillrun.audit/'
MARKER = b'"schema":'
MAX_FILE = 64 * 1024 * 1024
# Subdirectories of a run directory that hold the skill's own bytes.
SKILL_DIRS = ("logs", "outputs", "staging")


def jsonschema():
    """What is used of jsonschema, imported only when something is
    validated (the import alone costs 0.15 - 0.3 s)."""
    try:
        from jsonschema import Draft202012Validator, exceptions, validators
    except ImportError as e:
        print(f"schema-check: python3-jsonschema with draft 2020-12 is "
              f"needed: {e}", file=sys.stderr)
        sys.exit(3)
    return types.SimpleNamespace(Draft202012Validator=Draft202012Validator,
                                 exceptions=exceptions, validators=validators)


def load(schema_dir, name):
    with open(os.path.join(schema_dir, name), encoding="utf-8") as f:
        return json.load(f)


def keys_named(schema):
    """Every object key an (unresolved) schema names, at any depth."""
    found = set()
    if isinstance(schema, dict):
        for kw in ("properties", "patternProperties", "dependentRequired",
                   "dependentSchemas"):
            if isinstance(schema.get(kw), dict):
                found |= set(schema[kw])
        if isinstance(schema.get("required"), list):
            found |= set(schema["required"])
        for v in schema.values():
            found |= keys_named(v)
    elif isinstance(schema, list):
        for v in schema:
            found |= keys_named(v)
    return found


def dispatch(audit):
    """{event: its branch of allOf}, from audit.schema.json."""
    return {b["if"]["properties"]["event"]["const"]: b for b in audit["allOf"]}


def self_check(audit, metadata):
    js = jsonschema()
    problems = []
    for name, s in (("audit.schema.json", audit),
                    ("metadata.schema.json", metadata)):
        try:
            js.Draft202012Validator.check_schema(s)
        except js.exceptions.SchemaError as e:
            problems.append(f"{name}: not a valid draft 2020-12 schema: "
                            f"{e.message}")
    events = audit["properties"]["event"]["enum"]
    branches = dispatch(audit)
    for name in events:
        if name not in audit["$defs"]:
            problems.append(f"audit.schema.json: event {name} has no $defs entry")
        if branches.get(name, {}).get("then") != {"$ref": f"#/$defs/{name}"}:
            problems.append(f"audit.schema.json: event {name} is not "
                            f"dispatched to #/$defs/{name} in allOf")
    for name in branches:
        if name not in events:
            problems.append(f"audit.schema.json: allOf dispatches {name}, "
                            "which properties.event.enum does not list")
    # Checker's line cache relies on it, and src/audit.c refuses such a
    # field anyway.
    common = set(audit["properties"])
    for name in events:
        for key in sorted(keys_named(audit["$defs"].get(name, {})) & common):
            problems.append(f"audit.schema.json: $defs/{name} names the "
                            f"common key {key}")
    return problems


def caching_validator(js):
    """Draft202012Validator whose "properties" remembers the (subschema,
    value) pairs found valid, for objects and arrays: the policy object
    that every run of a test script repeats is checked once.  Validity
    depends on nothing else, so this changes no result."""
    valid = set()

    def properties(validator, properties, instance, schema):
        if not validator.is_type(instance, "object"):
            return
        for prop, sub in properties.items():
            if prop not in instance:
                continue
            value = instance[prop]
            if not isinstance(value, (dict, list)):
                yield from validator.descend(value, sub, path=prop,
                                             schema_path=prop)
                continue
            key = (id(sub), json.dumps(value, sort_keys=True))
            if key in valid:
                continue
            errors = list(validator.descend(value, sub, path=prop,
                                            schema_path=prop))
            if not errors:
                valid.add(key)
            yield from errors

    return js.validators.extend(js.Draft202012Validator,
                                {"properties": properties})


class Checker:
    def __init__(self, schema_dir):
        self.audit_schema = load(schema_dir, "audit.schema.json")
        self.meta_schema = load(schema_dir, "metadata.schema.json")
        self.js = None
        self.problems = []
        self.n_lines = self.n_streams = self.n_meta = 0
        self.events = {}
        self.valid_lines = set()

    def validators(self):
        """Built on first use: a scan that finds nothing imports nothing."""
        if self.js:
            return
        self.js = jsonschema()
        cls = caching_validator(self.js)
        # Without "$schema": evolve() picks the class a schema's "$schema"
        # names, the stock one, and a "$ref": "#" would leave this class.
        # The class says draft 2020-12 already.
        s = {k: v for k, v in self.audit_schema.items() if k != "$schema"}
        self.audit = cls(s)
        # The schema with only the common keys' part, and with only one
        # event's if/then: for a line whose event is that string, the other
        # branches' "if" fails and adds nothing, so each validates exactly
        # as the whole schema does (in half the time).  Evolved, so that
        # "#/$defs/..." still resolves in the whole document.
        base = {k: v for k, v in s.items() if k not in ("allOf", "$defs")}
        self.common = self.audit.evolve(schema={
            k: v for k, v in base.items() if k != "unevaluatedProperties"})
        self.per_event = {
            name: self.audit.evolve(schema=dict(base, allOf=[branch]))
            for name, branch in dispatch(s).items()}
        self.common_keys = set(s["properties"]) - {"event"}
        m = {k: v for k, v in self.meta_schema.items() if k != "$schema"}
        meta = cls(m)
        # evolve() keeps the root document for "#" references.
        self.meta = {
            None: meta,
            "sandbox": meta.evolve(schema=m["$defs"]["sandbox"]),
            "final": meta.evolve(schema=m["$defs"]["final"]),
        }

    def problem(self, where, text):
        self.problems.append(f"{where}: {text}")

    def first_error(self, validator, obj):
        """The most telling error: a key left unevaluated is often only the
        consequence of another error in the branch that would have
        evaluated it."""
        errors = list(validator.iter_errors(obj))
        primary = [e for e in errors if e.validator != "unevaluatedProperties"]
        return self.js.exceptions.best_match(primary or errors)

    @staticmethod
    def describe(error):
        path = "/".join(str(p) for p in error.absolute_path)
        return f"{path or '(top)'}: {error.message}"

    def check_line(self, name, lineno, raw):
        where = f"{name}:{lineno}"
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            self.problem(where, f"not JSON: {e}")
            return
        self.validators()
        self.n_lines += 1
        event = obj.get("event") if isinstance(obj, dict) else None
        if not isinstance(event, str):
            event = None
        if event:
            self.events[event] = self.events.get(event, 0) + 1
        fast = self.per_event.get(event)
        if fast:
            # A line whose own keys and values equal those of a valid line
            # is valid when its common keys are: no event's schema names a
            # common key (self_check).
            key = json.dumps({k: v for k, v in obj.items()
                              if k not in self.common_keys}, sort_keys=True)
            if key in self.valid_lines and self.common.is_valid(obj):
                return
            if fast.is_valid(obj):
                self.valid_lines.add(key)
                return
        error = self.first_error(self.audit, obj)
        if error is not None:
            self.problem(where, (f"{event}: " if event else "") +
                         self.describe(error))

    def check_audit_bytes(self, name, data, strict):
        """strict: every line must be an audit line (a pure stream)."""
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        elif strict:
            self.problem(f"{name}:{len(lines)}", "no newline at the end")
        seen = False
        for i, raw in enumerate(lines, 1):
            if raw.startswith(AUDIT_PREFIX):
                seen = True
                self.check_line(name, i, raw)
            elif strict:
                self.problem(f"{name}:{i}", "not an audit line in an audit "
                             f"stream: {raw[:80]!r}")
        if seen:
            self.n_streams += 1

    def check_metadata_obj(self, name, obj, kind):
        self.validators()
        self.n_meta += 1
        if self.meta[kind].is_valid(obj):
            return
        error = self.first_error(self.meta[kind], obj)
        self.problem(f"{name}:1", "metadata: " + self.describe(error))

    def check_metadata_file(self, name, kind):
        try:
            with open(name, "rb") as f:
                obj = json.loads(f.read(MAX_FILE))
        except (OSError, ValueError, UnicodeDecodeError) as e:
            self.problem(f"{name}:1", f"metadata: cannot read as JSON: {e}")
            return
        self.check_metadata_obj(name, obj, kind)

    def scan_file(self, path, in_run_dir):
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_FILE + 1)
        except OSError:
            return  # gone or unreadable: nothing a test can have meant
        if MARKER not in data:
            return
        if len(data) > MAX_FILE:
            self.problem(f"{path}:1", "larger than 64 MiB: not checked")
            return
        if AUDIT_PREFIX in data:
            self.check_audit_bytes(path, data, data.startswith(AUDIT_PREFIX))
            return
        head = data.lstrip()[:64]
        if head.startswith(b"{") and b"skillrun.metadata/" in head:
            try:
                obj = json.loads(data)
            except (ValueError, UnicodeDecodeError) as e:
                self.problem(f"{path}:1", f"metadata: not JSON: {e}")
                return
            final = in_run_dir and os.path.basename(path) == "metadata.json"
            self.check_metadata_obj(path, obj, "final" if final else None)

    def scan(self, root, skip):
        skip = {os.path.realpath(s) for s in skip}
        for top, dirs, files in os.walk(root):
            run_dir = "audit.jsonl" in files
            keep = []
            for d in sorted(dirs):
                p = os.path.join(top, d)
                if (run_dir and d in SKILL_DIRS) or os.path.realpath(p) in skip:
                    continue
                keep.append(d)
            dirs[:] = keep
            for fn in sorted(files):
                p = os.path.join(top, fn)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                if os.path.realpath(p) in skip:
                    continue
                self.scan_file(p, run_dir)

    def summary(self):
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.events.items()))
        return (f"{self.n_lines} audit lines in {self.n_streams} files"
                f"{' (' + kinds + ')' if kinds else ''}, "
                f"{self.n_meta} metadata files")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--schema-dir", default=os.path.join(here, "..", "schema"))
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--self-check", action="store_true")
    mode.add_argument("--scan", metavar="DIR")
    mode.add_argument("--audit", action="store_true")
    mode.add_argument("--metadata", action="store_true")
    kind = ap.add_mutually_exclusive_group()
    kind.add_argument("--sandbox", action="store_true")
    kind.add_argument("--final", action="store_true")
    ap.add_argument("--skip", action="append", default=[], metavar="PATH")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()

    c = Checker(a.schema_dir)
    if a.self_check:
        problems = self_check(c.audit_schema, c.meta_schema)
        for p in problems:
            print(p)
        print(f"self-check: {len(c.audit_schema['properties']['event']['enum'])}"
              " events")
        return 1 if problems else 0
    if a.scan:
        if a.files:
            ap.error("--scan takes no FILE")
        c.scan(a.scan, a.skip)
    elif a.audit:
        for fn in a.files:
            try:
                with open(fn, "rb") as f:
                    c.check_audit_bytes(fn, f.read(MAX_FILE), True)
            except OSError as e:
                c.problem(f"{fn}:1", f"cannot read: {e}")
    else:
        for fn in a.files:
            c.check_metadata_file(
                fn, "sandbox" if a.sandbox else "final" if a.final else None)
    for p in c.problems:
        print(p)
    print(c.summary())
    return 1 if c.problems else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # a bug here must not read as "invalid" (exit 1)
        import traceback
        traceback.print_exc()
        sys.exit(4)
