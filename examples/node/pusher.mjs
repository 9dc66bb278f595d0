#!/usr/bin/env node
// A jqmaster pusher in Node.js: push jobs in MessagePack and fetch their results, with the
// built-in `fetch` and @msgpack/msgpack (npm). Node 18 or newer.
//
// `JqClient` below is the whole client; copy it into your program. Running this file shows it at
// work (it needs a worker serving `sum` and `echo`, e.g. worker.mjs next to it):
//
//     cd examples/node && npm ci
//     node pusher.mjs --master http://127.0.0.1:8080
//
// With --constraints it also shows the admin APIs: constraints, schedules and the job browser
// (give --admin-token when the master has auth).

import { parseArgs, inspect } from "node:util";
import { decode, encode } from "@msgpack/msgpack";

const MSGPACK = "application/msgpack";

// An error answer from the master: {error, message, field?, index?}.
class JqError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.error = body?.error ?? `http_${status}`; // e.g. invalid_job, not_found
    this.field = body?.field; // the job field that was wrong, where it applies
    this.index = body?.index; // the bad job's position in a batch
  }
}

// No result to fetch: unknown job, fetched already, expired, or pushed without keep_result.
class NoResult extends Error {}

// The job, with a Date run_at as its ISO 8601 text (UTC, "Z"); anything else is sent as it is.
function withTimeText(job) {
  return job?.run_at instanceof Date ? { ...job, run_at: job.run_at.toISOString() } : job;
}

class JqClient {
  constructor(url = "http://127.0.0.1:8080", token = undefined) {
    this.url = url.replace(/\/+$/, "");
    this.headers = { Accept: MSGPACK };
    if (token) this.headers.Authorization = `Bearer ${token}`;
  }

  // Pushes one job. Resolves to {id, duplicate, merged}: duplicate is true when the push stored
  // nothing because a job of the same name and unique_key still holds its claim (id is then that
  // job's); merged is true when the push (on_duplicate "replace" or "append") went into it.
  // Options, as in the job table of the contract (the master checks them; a bad one rejects with
  // JqError invalid_job naming it):
  //   priority      integer, smaller runs first (default 0)
  //   max_retry     integer 0-1000, retries after the first attempt (default 3)
  //   keep_result   boolean, keep the result until result() fetches it (default false)
  //   timeout       seconds one attempt may run (default 30)
  //   delay         seconds after the push when the job becomes ready (0-31536000)
  //   run_at        when it becomes ready: an ISO 8601 string with an offset
  //                 ("2026-12-01T09:00:00Z") or a Date; not together with delay
  //   unique_key    string: while a job of this name and key holds its claim, pushing it again
  //                 stores nothing and resolves to the existing job's id with duplicate: true
  //   unique_until  "started" or "finished" (default): when the claim ends
  //   unique_for    seconds the claim lasts at most (default the master's, 86400)
  //   ordering_key  string: jobs of one key run one at a time, in push order
  //   on_duplicate  "keep" (default), "replace" or "append", with unique_key: what a push does
  //                 to the job holding the claim while it waits. "replace" gives it this
  //                 argument and priority (and, with delay or run_at, a new ready time: a
  //                 debounce); "append" adds the argument to its list (the worker gets
  //                 [a1, a2, ...]). Resolves with merged: true then
  async push(name, argument = null, options = {}) {
    const { body } = await this.#call("POST", "/v1/jobs", withTimeText({ name, argument, ...options }));
    return { id: body.id, duplicate: body.duplicate === true, merged: body.merged === true };
  }

  // Pushes 1-1000 job objects (with the options of push) at once, all or none. Resolves to
  // {ids, duplicates, merged}: the ids in the same order, the positions of the jobs that were
  // duplicates of a unique job (their ids are the existing jobs'; [] when there were none), and
  // those of them merged into it.
  async pushBatch(jobs) {
    const { body } = await this.#call("POST", "/v1/jobs", jobs.map(withTimeText));
    return { ids: body.ids, duplicates: body.duplicates ?? [], merged: body.merged ?? [] };
  }

  // The job's state: {id, name, state, attempts, ...}. JqError not_found once it is gone.
  async job(id) {
    return (await this.#call("GET", `/v1/jobs/${encodeURIComponent(id)}`)).body;
  }

  // Cancels a queued or scheduled job. JqError conflict (409) when it is already running.
  async cancel(id) {
    await this.#call("DELETE", `/v1/jobs/${encodeURIComponent(id)}`);
  }

  // The result object of a finished job pushed with keep_result: true, fetched once:
  // {type: "success", result, ...} or {type: "failure", message, error, ...}. Waits up to `wait`
  // seconds for it (long polls of at most 60 s each); null if the job has not finished by then.
  // Throws NoResult when there is nothing to fetch.
  async result(id, wait = 0) {
    const deadline = Date.now() + wait * 1000;
    for (;;) {
      const left = Math.max(0, Math.min(60, (deadline - Date.now()) / 1000));
      const path = `/v1/jobs/${encodeURIComponent(id)}/result?wait=${left.toFixed(3)}`;
      const { status, body } = await this.#call("GET", path, undefined, left + 10);
      if (status === 200 && body == null) throw new NoResult(`no result to fetch for job ${id}`);
      if (status === 200) return body;
      if (Date.now() >= deadline) return null; // 202: still queued, scheduled or running
    }
  }

  // One page of the jobs in `state` (queued, scheduled, running, dead), each with its argument:
  // {jobs, next_cursor}. Pass next_cursor back as `cursor` for the next page; it is null on the
  // last. Role admin.
  async jobs({ state = "queued", name, limit, cursor } = {}) {
    const query = new URLSearchParams({ state });
    if (name !== undefined) query.set("name", name);
    if (limit !== undefined) query.set("limit", String(limit));
    if (cursor !== undefined && cursor !== null) query.set("cursor", cursor);
    return (await this.#call("GET", `/v1/jobs?${query}`)).body;
  }

  // Every job in `state`, page by page.
  async *allJobs({ state = "queued", name, page = 100 } = {}) {
    let cursor = null;
    do {
      const answer = await this.jobs({ state, name, limit: page, cursor });
      yield* answer.jobs;
      cursor = answer.next_cursor;
    } while (cursor !== null);
  }

  // Constraints: flow control on the jobs a matcher selects (role admin). A constraint is an
  // object {name, match: {name, argument}, key, concurrency, rate, paused}; see the README.

  // Every constraint, sorted by name.
  async constraints() {
    return (await this.#call("GET", "/v1/constraints")).body;
  }

  // One constraint plus its live state: waiting, running, keys, top_keys.
  async constraint(name) {
    return (await this.#call("GET", `/v1/constraints/${encodeURIComponent(name)}`)).body;
  }

  // Creates it; JqError conflict (409) when the name is taken. Resolves to it as stored.
  async createConstraint(constraint) {
    return (await this.#call("POST", "/v1/constraints", constraint)).body;
  }

  // Replaces the whole constraint (omitted fields take their defaults).
  async putConstraint(name, constraint) {
    return (await this.#call("PUT", `/v1/constraints/${encodeURIComponent(name)}`, constraint)).body;
  }

  // Changes the fields given; null removes key, concurrency or rate.
  async patchConstraint(name, changes) {
    return (await this.#call("PATCH", `/v1/constraints/${encodeURIComponent(name)}`, changes)).body;
  }

  async deleteConstraint(name) {
    await this.#call("DELETE", `/v1/constraints/${encodeURIComponent(name)}`);
  }

  // Schedules: recurring jobs (role admin). A schedule is an object {name, cron | every,
  // timezone, job (a job as in push, without delay/run_at), overlap, missed, start_at, end_at,
  // paused}; reading one adds next_run_at, next_runs, last_run_at, last_job_id, runs, skipped,
  // missed_count and duplicates. See the README.

  // Every schedule, sorted by name, with its next runs.
  async schedules() {
    return (await this.#call("GET", "/v1/schedules")).body;
  }

  async schedule(name) {
    return (await this.#call("GET", schedulePath(name))).body;
  }

  // Creates it; JqError conflict (409) when the name is taken. Resolves to it as stored.
  async createSchedule(schedule) {
    return (await this.#call("POST", "/v1/schedules", schedule)).body;
  }

  // Replaces the whole schedule (omitted fields take their defaults).
  async putSchedule(name, schedule) {
    return (await this.#call("PUT", schedulePath(name), schedule)).body;
  }

  // Changes the fields given; a new timetable counts from now.
  async patchSchedule(name, changes) {
    return (await this.#call("PATCH", schedulePath(name), changes)).body;
  }

  async pauseSchedule(name) {
    return this.patchSchedule(name, { paused: true });
  }

  // Goes on from the next tick after now: the paused time is not missed.
  async resumeSchedule(name) {
    return this.patchSchedule(name, { paused: false });
  }

  async deleteSchedule(name) {
    await this.#call("DELETE", schedulePath(name));
  }

  // Makes one job now (also while paused); resolves to its id.
  async runSchedule(name) {
    return (await this.#call("POST", `${schedulePath(name)}/run`)).body.id;
  }

  // The next ticks of {cron | every, timezone, start_at, from, count}, with their offsets;
  // nothing is stored.
  async previewSchedule(timetable) {
    return (await this.#call("POST", "/v1/schedules/preview", timetable)).body.runs;
  }

  async #call(method, path, body = undefined, timeout = 30) {
    const headers = { ...this.headers };
    if (body !== undefined) headers["Content-Type"] = MSGPACK;
    const response = await fetch(this.url + path, {
      method,
      headers,
      body: body === undefined ? undefined : encode(body), // Uint8Array travels as bin
      signal: AbortSignal.timeout(Math.ceil(timeout * 1000)), // wants whole milliseconds
    });
    const raw = new Uint8Array(await response.arrayBuffer());
    let value = null; // 204 has no body
    if (raw.length > 0) {
      try {
        value = decode(raw);
      } catch {
        if (response.ok) throw new Error(`undecodable ${response.status} answer from ${path}`);
        value = { message: new TextDecoder().decode(raw) };
      }
    }
    if (!response.ok) throw new JqError(response.status, value);
    return { status: response.status, body: value };
  }
}

const show = (value) => inspect(value, { breakLength: Infinity, depth: null });

const schedulePath = (name) => `/v1/schedules/${encodeURIComponent(name)}`;

// A result object in a few words: the value, or why the job failed.
function outcome(answer) {
  if (answer == null) return "not finished in time";
  if (answer.type === "success") return show(answer.result);
  return `${answer.type} (${answer.reason}): ${answer.message}`;
}

// The constraints API: create, read, patch, replace, list, delete. The demo's jobs have run by
// then, so the constraint's live state reads zero.
async function showConstraints(jq) {
  const name = `demo-node-${process.pid}`;
  const created = await jq.createConstraint({
    name,
    match: { name: "sum", argument: [{ path: "/0", exists: true }] },
    key: "/0",
    concurrency: 5,
    rate: { limit: 100, period: 60, burst: 10 },
  });
  console.log(`constraint created: ${created.name} concurrency=${created.concurrency} rate=${created.rate.limit}/${created.rate.period}s`);
  try {
    await jq.createConstraint(created);
  } catch (e) {
    if (!(e instanceof JqError)) throw e;
    console.log(`constraint created again: ${e.status} ${e.error}`);
  }
  const state = await jq.constraint(name);
  console.log(`constraint ${name}: waiting=${state.waiting} running=${state.running} keys=${state.keys}`);
  const patched = await jq.patchConstraint(name, { paused: true, rate: null });
  console.log(`constraint patched: paused=${patched.paused} rate=${patched.rate} concurrency=${patched.concurrency}`);
  const replaced = await jq.putConstraint(name, { match: { name: "echo" }, concurrency: 1 });
  console.log(`constraint replaced: match=${replaced.match.name} key=${replaced.key} concurrency=${replaced.concurrency}`);
  console.log(`constraints listed: ${(await jq.constraints()).some((c) => c.name === name)}`);
  await jq.deleteConstraint(name);
  try {
    await jq.constraint(name);
  } catch (e) {
    if (!(e instanceof JqError)) throw e;
    console.log(`constraint deleted: ${e.status} ${e.error}`);
  }

  await showSchedules(jq);

  // The job browser (also role admin): a job due in an hour is listed as scheduled.
  const demo = `browse-demo-${process.pid}`;
  const { id: later } = await jq.push(demo, null, { delay: 3600 });
  const page = await jq.jobs({ state: "scheduled", name: demo, limit: 10 });
  const listed = page.jobs.length === 1 && page.jobs[0].id === later;
  console.log(`jobs browsed: scheduled=${listed} next_cursor=${page.next_cursor}`);
  await jq.cancel(later);
}

// The schedules API: preview a timetable across a daylight-saving change, create, pause, run
// now, resume, list, delete.
async function showSchedules(jq) {
  const gap = await jq.previewSchedule({
    cron: "30 2 * * *",
    timezone: "Europe/Berlin",
    from: "2026-03-28T00:00:00Z",
    count: 3,
  });
  console.log(`schedule preview: ${gap[1]}`); // 02:30 does not exist that night in Berlin
  const name = `demo-node-${process.pid}`;
  const created = await jq.createSchedule({
    name,
    cron: "30 2 * * *",
    timezone: "Europe/Berlin",
    job: { name: "nightly-demo", argument: "report" },
  });
  console.log(`schedule created: ${created.name} cron=${created.cron} next_runs=${created.next_runs.length}`);
  const paused = await jq.pauseSchedule(name);
  console.log(`schedule paused: next_run_at=${paused.next_run_at}`);
  const jobId = await jq.runSchedule(name);
  console.log(`schedule ran now: schedule=${(await jq.job(jobId)).schedule}`);
  await jq.cancel(jobId); // no worker serves nightly-demo here
  const resumed = await jq.resumeSchedule(name);
  console.log(`schedule resumed: runs=${resumed.runs} next_run_at set=${resumed.next_run_at !== null}`);
  console.log(`schedules listed: ${(await jq.schedules()).some((s) => s.name === name)}`);
  await jq.deleteSchedule(name);
  try {
    await jq.schedule(name);
  } catch (e) {
    if (!(e instanceof JqError)) throw e;
    console.log(`schedule deleted: ${e.status} ${e.error}`);
  }
}

async function main() {
  const { values: args } = parseArgs({
    options: {
      master: { type: "string" },
      token: { type: "string" },
      constraints: { type: "boolean" }, // also show the constraints API (an admin operation)
      "admin-token": { type: "string" }, // bearer token for --constraints; default --token
      help: { type: "boolean" },
    },
  });
  if (args.help) {
    console.log("usage: node pusher.mjs [--master URL] [--token TOKEN] [--constraints [--admin-token TOKEN]]");
    return;
  }
  const master = args.master ?? process.env.JQ_URL ?? "http://127.0.0.1:8080";
  const jq = new JqClient(master, args.token ?? process.env.JQ_TOKEN); // the token: if auth is on

  // One job: keep_result keeps its result until we fetch it (once).
  let { id } = await jq.push("sum", [1, 2, 3], { priority: 1, keep_result: true });
  console.log(`pushed sum [1, 2, 3] as ${id}: ${(await jq.job(id)).state}`);
  console.log(`sum [1, 2, 3] = ${outcome(await jq.result(id, 30))}`);

  // A batch: stored all or nothing; results come back exactly as sent, bytes included.
  const samples = [new Uint8Array([0, 1, 254, 255]), "h\u00e9llo", { nested: [1, 2.5, null, true, new Uint8Array([128])] }];
  const { ids } = await jq.pushBatch(samples.map((argument) => ({ name: "echo", argument, keep_result: true })));
  console.log(`pushed a batch of ${ids.length}: ${ids.join(", ")}`);
  for (const [i, sent] of samples.entries()) {
    console.log(`echo ${show(sent)} -> ${outcome(await jq.result(ids[i], 30))}`);
  }

  // A job that fails: with max_retry 0 it is dead at once; the result says why.
  ({ id } = await jq.push("sum", "not a list", { max_retry: 0, keep_result: true }));
  console.log(`sum 'not a list' -> ${outcome(await jq.result(id, 30))}`);

  // Cancelling works while a job waits: `nobody` has no worker here.
  ({ id } = await jq.push("nobody", { report: 7 }));
  try {
    await jq.cancel(id);
    console.log(`cancelled ${id}`);
    await jq.job(id);
  } catch (e) { // not_found after the cancel; conflict if it was already running
    if (!(e instanceof JqError)) throw e;
    console.log(`job ${id}: ${e.status} ${e.error}: ${e.message}`);
  }

  // A debounce: pushed again while it waits, the job takes the newer argument (same id).
  const key = `report-${process.pid}`;
  const first = await jq.push("nobody", { rev: 1 }, { unique_key: key, on_duplicate: "replace", delay: 3600 });
  const again = await jq.push("nobody", { rev: 2 }, { unique_key: key, on_duplicate: "replace", delay: 3600 });
  console.log(`merged: same_id=${again.id === first.id} merged=${again.merged}`);
  await jq.cancel(first.id);

  // Bad input: the answer names the error, the field and, in a batch, the index.
  for (const bad of [[{ name: "sum" }, { name: "sum", max_retries: 2 }], [{ name: "-no" }]]) {
    try {
      await jq.pushBatch(bad);
    } catch (e) {
      if (!(e instanceof JqError)) throw e;
      console.log(`refused: ${e.status} ${e.error} index=${e.index} field=${e.field}: ${e.message}`);
    }
  }

  if (args.constraints) {
    const token = args["admin-token"] ?? process.env.JQ_ADMIN_TOKEN ?? args.token ?? process.env.JQ_TOKEN;
    await showConstraints(new JqClient(master, token));
  }
}

main().catch((e) => {
  if (e instanceof JqError) console.error(`jqmaster said ${e.status} ${e.error}: ${e.message}`);
  else if (e.name === "TypeError" && e.cause) console.error(`cannot reach jqmaster: ${e.cause.message}`);
  else console.error(e); // fetch timeouts (TimeoutError) and bugs
  process.exitCode = 1;
});
