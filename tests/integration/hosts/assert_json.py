#!/usr/bin/env python3
"""Assertions on paictl's JSON output for the sshd test-host tests.

  assert_json.py results FILE HOST CHECK=STATUS...   those checks have those statuses;
                                                     every other check of HOST is pass, warn or skip
  assert_json.py host FILE HOST KEY=VALUE...          fields of the host entry ("reached=true")
  assert_json.py summary FILE KEY=VALUE...            fields of the summary
  assert_json.py message FILE HOST CHECK TEXT         the check's message contains TEXT
  assert_json.py facts FILE KEY.PATH=VALUE...         fields of a facts document (dotted paths, [i] for lists)
"""
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def value(text):
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        return text


def dig(doc, path):
    cur = doc
    for part in path.split("."):
        while "[" in part:
            name, rest = part.split("[", 1)
            idx, part = rest.split("]", 1)
            if name:
                cur = cur[name]
            cur = cur[int(idx)]
            part = part.lstrip(".")
            if not part:
                break
        if part:
            cur = cur[part]
    return cur


def die(msg):
    print("assert_json: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    doc = load(path)
    args = sys.argv[3:]
    if cmd == "results":
        host, wants = args[0], dict(a.split("=", 1) for a in args[1:])
        rows = [r for r in doc["results"] if r["host"] == host]
        if not rows:
            die("no results for host %s" % host)
        seen = {r["check"]: r for r in rows}
        for check, status in wants.items():
            if check not in seen:
                die("%s: no result for %s (has %s)" % (host, check, ", ".join(sorted(seen))))
            if seen[check]["status"] != status:
                die("%s %s: status %s, expected %s (%s)" % (host, check, seen[check]["status"], status, seen[check]["message"]))
        for r in rows:
            if r["check"] not in wants and r["status"] == "fail":
                die("%s %s failed unexpectedly: %s" % (host, r["check"], r["message"]))
    elif cmd == "host":
        host = args[0]
        entry = [h for h in doc["hosts"] if h["name"] == host]
        if not entry:
            die("no host entry %s" % host)
        for kv in args[1:]:
            k, v = kv.split("=", 1)
            if entry[0].get(k) != value(v):
                die("%s %s = %r, expected %r" % (host, k, entry[0].get(k), value(v)))
    elif cmd == "summary":
        for kv in args:
            k, v = kv.split("=", 1)
            if doc["summary"].get(k) != value(v):
                die("summary %s = %r, expected %r" % (k, doc["summary"].get(k), value(v)))
    elif cmd == "message":
        host, check, text = args
        rows = [r for r in doc["results"] if r["host"] == host and r["check"] == check]
        if not rows or text not in rows[0]["message"]:
            die("%s %s message %r does not contain %r" % (host, check, rows[0]["message"] if rows else None, text))
    elif cmd == "facts":
        for kv in args:
            k, v = kv.split("=", 1)
            try:
                got = dig(doc, k)
            except (KeyError, IndexError, TypeError):
                die("facts: no %s" % k)
            if v == "*nonempty*":
                if not got:
                    die("facts: %s is empty" % k)
            elif got != value(v):
                die("facts: %s = %r, expected %r" % (k, got, value(v)))
    else:
        die("unknown command " + cmd)


if __name__ == "__main__":
    main()
