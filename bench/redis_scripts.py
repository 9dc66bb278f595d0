#!/usr/bin/env python3
"""Where Redis spends its time per job, by script: bench/profile.sh with PROFILER=redis.

    redis_scripts.py LUA_SCRIPTS_CPP|JQMASTER_BINARY REDIS_PORT JQBENCH_JSON_LINE

Scripts go by FCALL <library>_<script>, named in the log. A binary of a commit from before the
function library (e.g. an earlier commit's, profile.sh's MASTER_BIN) sent EVALSHA: its scripts
are matched by their SHA1, read from LUA_SCRIPTS_CPP (that build's generated/lua_scripts.cpp,
every script as it loaded it) or from the binary itself, named by their header
(`--[[ name:`). It reads SLOWLOG GET -1 from the Redis on loopback REDIS_PORT after a run with
slowlog-log-slower-than 0 (every command a client sent, with the µs Redis spent in it; commands
run inside a script are part of its time); not through `redis-cli --quoted-json`, whose JSON
breaks on a '"' inside a binary argument. Prints one JSON line: per script (FCALL or EVALSHA)
or command, its calls per job, µs per job and µs per call, the most costly first, and the total
µs per job the slow log saw.
"""
import hashlib
import json
import re
import sys

from benchlib import redis_command

ENTRY = re.compile(r'\{"([^"]+)", R"jqlua\((.*?)\)jqlua"\}', re.S)


EMBEDDED = re.compile(rb"#!lua flags=[^\x00]*")
HEADER = re.compile(rb"\n--\[\[ (\w+):")


def script_names(path):
    if not path.endswith(".cpp"):
        # The scripts are NUL-terminated string literals in the binary; the preamble comes first,
        # so the script's own header is the last one.
        with open(path, "rb") as f:
            data = f.read()
        names = {}
        for src in EMBEDDED.findall(data):
            headers = HEADER.findall(src)
            if headers:
                names[hashlib.sha1(src).hexdigest()] = headers[-1].decode()
        return names
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return {hashlib.sha1(src.encode()).hexdigest(): name for name, src in ENTRY.findall(text)}


def main():
    names = script_names(sys.argv[1])
    entries = redis_command(int(sys.argv[2]), "SLOWLOG", "GET", "-1")
    run = json.loads(sys.argv[3])
    # The log covers the warm-up; the constraints scenario names its jobs by its part.
    jobs = (run.get("jobs", 0) + run.get("warmup_jobs", 0) + run.get("throughput_jobs", 0)) or 1
    totals = {}  # name -> [calls, µs]
    for entry in entries:
        duration_us, args = entry[2], entry[3]
        if not args:
            continue
        args = [a.decode(errors="replace") for a in args[:2]]
        command = args[0].lower()
        if command in ("slowlog", "config", "info"):
            continue
        name = command
        if command == "fcall" and len(args) > 1:
            name = "fcall " + args[1].split("_", 2)[-1]  # jq_<hash>_pushJobs
        elif command == "evalsha" and len(args) > 1:
            name = "evalsha " + names.get(args[1].lower(), args[1][:12])
        t = totals.setdefault(name, [0, 0])
        t[0] += 1
        t[1] += duration_us
    rows = sorted(totals.items(), key=lambda kv: -kv[1][1])
    print(json.dumps({
        "jobs": jobs,
        "slowlog_entries": len(entries),
        "us_per_job": round(sum(t[1] for t in totals.values()) / jobs, 2),
        "by_script": {n: {"calls_per_job": round(c / jobs, 3), "us_per_job": round(us / jobs, 2),
                          "us_per_call": round(us / c, 2)} for n, (c, us) in rows},
    }))


if __name__ == "__main__":
    main()
