#!/usr/bin/python3
"""A jqmaster pusher in plain Python: push jobs in MessagePack and fetch their results.

`JqClient` below is the whole client (standard library HTTP + msgpack, Debian: python3-msgpack);
copy it into your program. Running this file shows it at work:

    /usr/bin/python3 examples/python/pusher.py --master http://127.0.0.1:8080

It needs a worker serving `sum` and `echo` to get results, e.g. examples/python/worker.py.
With `--constraints` it also shows the admin APIs: constraints, schedules and the job browser
(give `--admin-token` when the master has auth).
"""

import argparse
import datetime
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import msgpack

MSGPACK = "application/msgpack"


class JqError(Exception):
    """An error answer from the master: {error, message, field?, index?}."""

    def __init__(self, status, body):
        body = body if isinstance(body, dict) else {}
        self.status = status
        self.error = body.get("error", "http_%d" % status)  # e.g. invalid_job, not_found
        self.field = body.get("field")  # the job field that was wrong, where it applies
        self.index = body.get("index")  # the bad job's position in a batch
        super().__init__(body.get("message", "HTTP %d" % status))


class NoResult(LookupError):
    """No result to fetch: unknown job, fetched already, expired, or pushed without keep_result."""


class JobId(str):
    """A pushed job's id. `duplicate` is True when the push stored nothing because a job of the
    same name and unique_key still holds its claim: the id is then that job's. `merged` is True
    when the push (on_duplicate "replace" or "append") was merged into that job."""

    duplicate = False
    merged = False


class JobIds(list):
    """A batch's ids in order. `duplicates` lists the positions of the jobs that were duplicates
    (their ids are the existing jobs'); empty when every job was stored. `merged` lists those of
    them that were merged into the existing job."""

    duplicates = ()
    merged = ()


class JqClient:
    def __init__(self, url="http://127.0.0.1:8080", token=None):
        self.url = url.rstrip("/")
        self.headers = {"Accept": MSGPACK}
        if token:
            self.headers["Authorization"] = "Bearer " + token

    def push(self, name, argument=None, **options):
        """Pushes one job and returns its id (a JobId: a str with `.duplicate`).

        Options, as in the job table of the contract (the master checks them and raises JqError
        invalid_job naming a bad one):
          priority      int, smaller runs first (default 0)
          max_retry     int 0-1000, retries after the first attempt (default 3)
          keep_result   bool, keep the result until result() fetches it (default False)
          timeout       seconds one attempt may run (default 30)
          delay         seconds after the push when the job becomes ready (0-31536000)
          run_at        when it becomes ready: an ISO 8601 string with an offset
                        ("2026-12-01T09:00:00Z"), or a datetime with a tzinfo; not with delay
          unique_key    str: while a job of this name and key holds its claim, pushing it again
                        stores nothing; the id returned is the existing job's and
                        `.duplicate` is True
          unique_until  "started" or "finished" (default): when the claim ends
          unique_for    seconds the claim lasts at most (default the master's, 86400)
          ordering_key  str: jobs of one key run one at a time, in push order
          on_duplicate  "keep" (default), "replace" or "append", with unique_key: what a push
                        does to the job holding the claim while it waits. "replace" gives it
                        this argument and priority (and, with delay or run_at, a new ready time:
                        a debounce); "append" adds the argument to its list (the worker gets
                        [a1, a2, ...]). `.merged` is then True
        """
        job = with_time_text(dict(name=name, argument=argument, **options))
        answer = self._call("POST", "/v1/jobs", job)
        job_id = JobId(answer["id"])
        job_id.duplicate = bool(answer.get("duplicate", False))
        job_id.merged = bool(answer.get("merged", False))
        return job_id

    def push_batch(self, jobs):
        """Pushes 1-1000 job maps (with the options of push()) at once, all or none. Returns
        their ids in the same order (a JobIds: a list with `.duplicates`, the positions of the
        jobs that were duplicates of a unique job, their ids the existing jobs', and `.merged`,
        those of them merged into it)."""
        answer = self._call("POST", "/v1/jobs", [with_time_text(job) for job in jobs])
        ids = JobIds(answer["ids"])
        ids.duplicates = list(answer.get("duplicates", []))
        ids.merged = list(answer.get("merged", []))
        return ids

    def job(self, job_id):
        """The job's state: {id, name, state, attempts, ...}. JqError not_found once it is gone."""
        return self._call("GET", "/v1/jobs/" + urllib.parse.quote(job_id))

    def cancel(self, job_id):
        """Cancels a queued or scheduled job. JqError conflict (409) when it is already running."""
        self._call("DELETE", "/v1/jobs/" + urllib.parse.quote(job_id))

    def result(self, job_id, wait=0):
        """The result object of a finished job pushed with keep_result=True, fetched once:
        {type: "success", result, ...} or {type: "failure", message, error, ...}.

        Waits up to `wait` seconds for it (long polls of at most 60 s each) and returns None if
        the job has not finished by then. Raises NoResult when there is nothing to fetch.
        """
        deadline = time.monotonic() + wait
        while True:
            left = max(0.0, min(60.0, deadline - time.monotonic()))
            path = "/v1/jobs/%s/result?wait=%.3f" % (urllib.parse.quote(job_id), left)
            status, body = self._call("GET", path, timeout=left + 10, with_status=True)
            if status == 200 and body is None:
                raise NoResult("no result to fetch for job " + job_id)
            if status == 200:
                return body
            if time.monotonic() >= deadline:  # 202: still queued, scheduled or running
                return None

    def jobs(self, state="queued", name=None, limit=None, cursor=None):
        """One page of the jobs in `state` (queued, scheduled, running, dead), each with its
        argument: {jobs, next_cursor}. Pass next_cursor back as `cursor` for the next page; it is
        None on the last. Role admin."""
        query = {"state": state, "name": name, "limit": limit, "cursor": cursor}
        query = urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        return self._call("GET", "/v1/jobs?" + query)

    def all_jobs(self, state="queued", name=None, page=100):
        """Every job in `state`, page by page (a generator)."""
        cursor = None
        while True:
            answer = self.jobs(state, name, page, cursor)
            yield from answer["jobs"]
            cursor = answer["next_cursor"]
            if cursor is None:
                return

    # Constraints: flow control on the jobs a matcher selects (role admin). A constraint is a
    # map {name, match: {name, argument}, key, concurrency, rate, paused}; see the README.
    def constraints(self):
        """Every constraint, sorted by name."""
        return self._call("GET", "/v1/constraints")

    def constraint(self, name):
        """One constraint plus its live state: waiting, running, keys, top_keys."""
        return self._call("GET", "/v1/constraints/" + urllib.parse.quote(name, safe=""))

    def create_constraint(self, constraint):
        """Creates it; JqError conflict (409) when the name is taken. Returns it as stored."""
        return self._call("POST", "/v1/constraints", constraint)

    def put_constraint(self, name, constraint):
        """Replaces the whole constraint (omitted fields take their defaults)."""
        return self._call("PUT", "/v1/constraints/" + urllib.parse.quote(name, safe=""),
                          constraint)

    def patch_constraint(self, name, changes):
        """Changes the fields given; None removes key, concurrency or rate."""
        return self._call("PATCH", "/v1/constraints/" + urllib.parse.quote(name, safe=""),
                          changes)

    def delete_constraint(self, name):
        self._call("DELETE", "/v1/constraints/" + urllib.parse.quote(name, safe=""))

    # Schedules: recurring jobs (role admin). A schedule is a map {name, cron | every, timezone,
    # job (a job as in push, without delay/run_at), overlap, missed, start_at, end_at, paused};
    # reading one adds next_run_at, next_runs, last_run_at, last_job_id, runs, skipped,
    # missed_count and duplicates. See the README.
    def schedules(self):
        """Every schedule, sorted by name, with its next runs."""
        return self._call("GET", "/v1/schedules")

    def schedule(self, name):
        return self._call("GET", self._schedule_path(name))

    def create_schedule(self, schedule):
        """Creates it; JqError conflict (409) when the name is taken. Returns it as stored."""
        return self._call("POST", "/v1/schedules", schedule)

    def put_schedule(self, name, schedule):
        """Replaces the whole schedule (omitted fields take their defaults)."""
        return self._call("PUT", self._schedule_path(name), schedule)

    def patch_schedule(self, name, changes):
        """Changes the fields given; a new timetable counts from now."""
        return self._call("PATCH", self._schedule_path(name), changes)

    def pause_schedule(self, name):
        return self.patch_schedule(name, {"paused": True})

    def resume_schedule(self, name):
        """Goes on from the next tick after now: the paused time is not missed."""
        return self.patch_schedule(name, {"paused": False})

    def delete_schedule(self, name):
        self._call("DELETE", self._schedule_path(name))

    def run_schedule(self, name):
        """Makes one job now (also while paused) and returns its id."""
        return self._call("POST", self._schedule_path(name) + "/run")["id"]

    def preview_schedule(self, timetable):
        """The next ticks of {cron | every, timezone, start_at, from, count}, with their offsets;
        nothing is stored."""
        return self._call("POST", "/v1/schedules/preview", timetable)["runs"]

    @staticmethod
    def _schedule_path(name):
        return "/v1/schedules/" + urllib.parse.quote(name, safe="")

    def _call(self, method, path, body=None, timeout=30, with_status=False):
        headers = dict(self.headers)
        data = None
        if body is not None:
            data = msgpack.packb(body)  # bytes travel as MessagePack bin, str as str
            headers["Content-Type"] = MSGPACK
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as e:  # 4xx and 5xx come with an error map
            raw = e.read()
            try:
                error = msgpack.unpackb(raw)
            except ValueError:
                error = {"message": raw.decode(errors="replace")}
            raise JqError(e.code, error) from None
        value = msgpack.unpackb(raw) if raw else None  # 204 has no body; "nil" is b"\xc0"
        return (status, value) if with_status else value


def with_time_text(job):
    """The job, with a datetime run_at as its ISO 8601 text (a naive datetime gives no offset,
    which the master refuses: give it a tzinfo). Anything else is sent as it is."""
    if isinstance(job, dict) and isinstance(job.get("run_at"), datetime.datetime):
        return dict(job, run_at=job["run_at"].isoformat())
    return job


def outcome(answer):
    """A result object in a few words: the value, or why the job failed."""
    if answer is None:
        return "not finished in time"
    if answer["type"] == "success":
        return repr(answer["result"])
    return f"{answer['type']} ({answer['reason']}): {answer['message']}"


def show_constraints(jq):
    """The constraints API: create, read, patch, replace, list, delete. The demo's jobs have
    run by then, so the constraint's live state reads zero."""
    name = "demo-python-%d" % os.getpid()
    created = jq.create_constraint({
        "name": name,
        "match": {"name": "sum", "argument": [{"path": "/0", "exists": True}]},
        "key": "/0", "concurrency": 5, "rate": {"limit": 100, "period": 60, "burst": 10}})
    print(f"constraint created: {created['name']} concurrency={created['concurrency']} "
          f"rate={created['rate']['limit']}/{created['rate']['period']}s")
    try:
        jq.create_constraint(created)
    except JqError as e:
        print(f"constraint created again: {e.status} {e.error}")
    state = jq.constraint(name)
    print(f"constraint {name}: waiting={state['waiting']} running={state['running']} "
          f"keys={state['keys']}")
    patched = jq.patch_constraint(name, {"paused": True, "rate": None})
    print(f"constraint patched: paused={patched['paused']} rate={patched['rate']} "
          f"concurrency={patched['concurrency']}")
    replaced = jq.put_constraint(name, {"match": {"name": "echo"}, "concurrency": 1})
    print(f"constraint replaced: match={replaced['match']['name']} key={replaced['key']} "
          f"concurrency={replaced['concurrency']}")
    print(f"constraints listed: {name in [c['name'] for c in jq.constraints()]}")
    jq.delete_constraint(name)
    try:
        jq.constraint(name)
    except JqError as e:
        print(f"constraint deleted: {e.status} {e.error}")

    show_schedules(jq)

    # The job browser (also role admin): a job due in an hour is listed as scheduled.
    later = jq.push("browse-demo-%d" % os.getpid(), None, delay=3600)
    page = jq.jobs("scheduled", name="browse-demo-%d" % os.getpid(), limit=10)
    print(f"jobs browsed: scheduled={[j['id'] for j in page['jobs']] == [later]} "
          f"next_cursor={page['next_cursor']}")
    jq.cancel(later)


def show_schedules(jq):
    """The schedules API: preview a timetable across a daylight-saving change, create, pause,
    run now, resume, list, delete."""
    gap = jq.preview_schedule({"cron": "30 2 * * *", "timezone": "Europe/Berlin",
                               "from": "2026-03-28T00:00:00Z", "count": 3})
    print(f"schedule preview: {gap[1]}")  # 02:30 does not exist that night in Berlin
    name = "demo-python-%d" % os.getpid()
    created = jq.create_schedule({"name": name, "cron": "30 2 * * *", "timezone": "Europe/Berlin",
                                  "job": {"name": "nightly-demo", "argument": "report"}})
    print(f"schedule created: {created['name']} cron={created['cron']} "
          f"next_runs={len(created['next_runs'])}")
    paused = jq.pause_schedule(name)
    print(f"schedule paused: next_run_at={paused['next_run_at']}")
    job_id = jq.run_schedule(name)
    print(f"schedule ran now: schedule={jq.job(job_id)['schedule']}")
    jq.cancel(job_id)  # no worker serves nightly-demo here
    resumed = jq.resume_schedule(name)
    print(f"schedule resumed: runs={resumed['runs']} next_run_at set={resumed['next_run_at'] is not None}")
    print(f"schedules listed: {name in [s['name'] for s in jq.schedules()]}")
    jq.delete_schedule(name)
    try:
        jq.schedule(name)
    except JqError as e:
        print(f"schedule deleted: {e.status} {e.error}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", default=os.environ.get("JQ_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--token", default=os.environ.get("JQ_TOKEN"), help="bearer token, if any")
    parser.add_argument("--constraints", action="store_true",
                        help="also show the constraints, schedules and job browser APIs "
                             "(admin operations)")
    parser.add_argument("--admin-token", default=os.environ.get("JQ_ADMIN_TOKEN"),
                        help="bearer token for --constraints; default --token")
    args = parser.parse_args()
    jq = JqClient(args.master, args.token)

    # One job: keep_result=True keeps its result until we fetch it (once).
    job_id = jq.push("sum", [1, 2, 3], priority=1, keep_result=True)
    print(f"pushed sum [1, 2, 3] as {job_id}: {jq.job(job_id)['state']}")
    print(f"sum [1, 2, 3] = {outcome(jq.result(job_id, wait=30))}")

    # A batch: stored all or nothing; results come back exactly as sent, bytes included.
    arguments = [b"\x00\x01\xfe\xff", "h\u00e9llo", {"nested": [1, 2.5, None, True, b"\x80"]}]
    ids = jq.push_batch({"name": "echo", "argument": a, "keep_result": True} for a in arguments)
    print(f"pushed a batch of {len(ids)}: {', '.join(ids)}")
    for sent, job_id in zip(arguments, ids):
        print(f"echo {sent!r} -> {outcome(jq.result(job_id, wait=30))}")

    # A job that fails: with max_retry=0 it is dead at once; the result says why.
    job_id = jq.push("sum", "not a list", max_retry=0, keep_result=True)
    print(f"sum 'not a list' -> {outcome(jq.result(job_id, wait=30))}")

    # Cancelling works while a job waits: `nobody` has no worker here.
    job_id = jq.push("nobody", {"report": 7})
    try:
        jq.cancel(job_id)
        print(f"cancelled {job_id}")
        jq.job(job_id)
    except JqError as e:  # not_found after the cancel; conflict if it was already running
        print(f"job {job_id}: {e.status} {e.error}: {e}")

    # A debounce: pushed again while it waits, the job takes the newer argument (same id).
    key = "report-%d" % os.getpid()
    first = jq.push("nobody", {"rev": 1}, unique_key=key, on_duplicate="replace", delay=3600)
    again = jq.push("nobody", {"rev": 2}, unique_key=key, on_duplicate="replace", delay=3600)
    print(f"merged: same_id={again == first} merged={again.merged}")
    jq.cancel(first)

    # Bad input: the answer names the error, the field and, in a batch, the index.
    for bad in ([{"name": "sum"}, {"name": "sum", "max_retries": 2}], [{"name": "-no"}]):
        try:
            jq.push_batch(bad)
        except JqError as e:
            print(f"refused: {e.status} {e.error} index={e.index} field={e.field}: {e}")

    if args.constraints:
        show_constraints(JqClient(args.master, args.admin_token or args.token))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except JqError as e:
        sys.exit(f"jqmaster said {e.status} {e.error}: {e}")
    except (urllib.error.URLError, OSError) as e:
        sys.exit(f"cannot reach jqmaster: {e}")
