#!/usr/bin/python3
"""Drift check: the routes jqmaster serves against the operations openapi/master.yaml describes.

Runs `build/cmd/jqmaster --routes` (one "METHOD PATTERN" per line, from a Router built the way
the daemon builds its own) and compares it with the spec's operations. Path parameters are
compared by position only ("/v1/jobs/{id}" matches "/v1/jobs/{job_id}"). Operations marked
`x-jq-status: planned` are not expected to be served yet; one that is served is reported, so the
marker is removed once the route exists.

It also checks what ties the spec's operations together, which the linter does not: every
operation has an operationId, unique in the file (generated clients name their methods after
them); every response link names an existing operationId and only parameters that operation has;
every operation that takes a bearer token also admits the empty requirement `{}`, since a master
without `auth` needs none.

Prints one line per route and check and a final "N passed, N failed" line; exits 1 on any
difference.
Environment: JQMASTER overrides the binary's path, JQ_OPENAPI_DIR the spec's folder.
"""

import os
import pathlib
import re
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPEC = pathlib.Path(os.environ.get("JQ_OPENAPI_DIR", ROOT / "openapi")) / "master.yaml"
MASTER = pathlib.Path(os.environ.get("JQMASTER", ROOT / "build" / "cmd" / "jqmaster"))
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def normalise(pattern):
    """'/v1/jobs/{id}/result' -> '/v1/jobs/{}/result'."""
    return re.sub(r"\{[^/{}]*\}", "{}", pattern)


def served_routes():
    """{(METHOD, normalised pattern): pattern as served}."""
    out = subprocess.run([str(MASTER), "--routes"], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        sys.exit(f"FAIL {MASTER} --routes exited {out.returncode}: {out.stderr.strip()}")
    routes = {}
    for line in out.stdout.splitlines():
        if not line.strip():
            continue
        method, pattern = line.split()
        routes[(method.upper(), normalise(pattern))] = pattern
    if not routes:
        sys.exit(f"FAIL {MASTER} --routes printed no routes")
    return routes


def spec_operations():
    """({(METHOD, normalised path): path} implemented, the same for planned ones)."""
    spec = yaml.safe_load(SPEC.read_text())
    implemented, planned = {}, {}
    for path, item in spec.get("paths", {}).items():
        for method in HTTP_METHODS:
            op = item.get(method)
            if op is None:
                continue
            status = op.get("x-jq-status", item.get("x-jq-status"))
            key = (method.upper(), normalise(path))
            (planned if status == "planned" else implemented)[key] = path
    return implemented, planned


def resolve(spec, node):
    while isinstance(node, dict) and str(node.get("$ref", "")).startswith("#/"):
        target = spec
        for part in node["$ref"][2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def operations_of(spec):
    """(label "METHOD /path", path item, operation) for every operation of the spec."""
    for path, item in spec.get("paths", {}).items():
        for method in HTTP_METHODS:
            if item.get(method) is not None:
                yield f"{method.upper()} {path}", item, item[method]


def spec_problems():
    """[(label, problem or None)] for the operationIds, links and security alternatives."""
    spec = yaml.safe_load(SPEC.read_text())
    results = []
    operations = {}  # operationId -> set of parameter names
    for label, item, op in operations_of(spec):
        op_id = op.get("operationId")
        if not op_id:
            results.append((f"{label}: operationId", "has none"))
            continue
        if op_id in operations:
            results.append((f"{label}: operationId {op_id}", "is used twice"))
            continue
        params = item.get("parameters", []) + op.get("parameters", [])
        operations[op_id] = {resolve(spec, p).get("name") for p in params}
        results.append((f"{label}: operationId {op_id}", None))
    default_security = spec.get("security", [])
    for label, item, op in operations_of(spec):
        security = op.get("security", default_security)
        if any("bearerAuth" in req for req in security):
            results.append((f"{label}: security admits no token as well ({{}})",
                            None if {} in security else "no {} alternative"))
        for status, response in op.get("responses", {}).items():
            for name, link in resolve(spec, response).get("links", {}).items():
                link = resolve(spec, link)
                target = link.get("operationId")
                where = f"{label} {status}: link {name} -> {target}"
                if target not in operations:
                    results.append((where, "no such operationId"))
                    continue
                unknown = set(link.get("parameters", {})) - operations[target]
                results.append((where, f"{target} has no parameter {', '.join(sorted(unknown))}"
                                if unknown else None))
    return results


def main():
    passed = failed = 0
    for label, problem in spec_problems():
        if problem:
            print(f"FAIL {label}: {problem}")
            failed += 1
        else:
            print(f"ok   {label}")
            passed += 1
    served = served_routes()
    implemented, planned = spec_operations()
    for key in sorted(set(served) | set(implemented) | set(planned), key=lambda k: (k[1], k[0])):
        method = key[0]
        if key in served and key in implemented:
            print(f"ok   {method} {served[key]}: served and in the spec")
            passed += 1
        elif key in served and key in planned:
            print(f"FAIL {method} {served[key]}: served, but master.yaml marks it "
                  f"x-jq-status: planned (remove the marker)")
            failed += 1
        elif key in served:
            print(f"FAIL {method} {served[key]}: served, but not in master.yaml")
            failed += 1
        elif key in implemented:
            print(f"FAIL {method} {implemented[key]}: in master.yaml, but jqmaster does not serve "
                  f"it (mark it x-jq-status: planned if it is not built yet)")
            failed += 1
        else:
            print(f"skip {method} {planned[key]}: planned, not served yet")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
