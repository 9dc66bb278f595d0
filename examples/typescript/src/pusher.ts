#!/usr/bin/env node
// A jqmaster pusher in TypeScript: a JSON client made of openapi-fetch (npm) and the types that
// openapi-typescript generated from openapi/master.yaml into schema.d.ts (`npm run generate`).
// Paths, parameters, bodies and answers are all checked against the contract by tsc. Node 18 or
// newer.
//
// `JqClient` below is the whole client; copy it and schema.d.ts into your program. Running this
// file shows it at work (it needs a worker serving `sum` and `echo`, e.g. examples/node/worker.mjs):
//
//     cd examples/typescript && npm ci && npm run build
//     node dist/pusher.js --master http://127.0.0.1:8080

import { inspect, parseArgs } from "node:util";
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];
export type NewJob = Schemas["NewJob"];
export type Job = Schemas["Job"];
export type JobResult = Schemas["JobResult"];
type ErrorBody = Schemas["Error"];

// An error answer from the master: {error, message, field?, index?}.
export class JqError extends Error {
  readonly error: string; // e.g. invalid_job, not_found
  readonly field?: string; // the job field that was wrong, where it applies
  readonly index?: number; // the bad job's position in a batch

  constructor(readonly status: number, body: unknown) {
    const known = typeof body === "object" && body !== null ? (body as Partial<ErrorBody>) : {};
    super(known.message ?? (typeof body === "string" && body ? body : `HTTP ${status}`));
    this.error = known.error ?? `http_${status}`;
    this.field = known.field;
    this.index = known.index;
  }
}

// No result to fetch: unknown job, fetched already, expired, or pushed without keep_result.
export class NoResult extends Error {}

// What every openapi-fetch call resolves to: data on 2xx, error (the parsed body) otherwise.
interface Answer<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

// The answer's data and status; a non-2xx answer throws JqError.
async function ok<D>(call: Promise<Answer<D>>): Promise<{ status: number; data: D | undefined }> {
  const { data, error, response } = await call;
  if (!response.ok) throw new JqError(response.status, error);
  return { status: response.status, data };
}

// Node's fetch takes whole milliseconds.
const within = (seconds: number) => AbortSignal.timeout(Math.ceil(seconds * 1000));

export class JqClient {
  // The generated client itself: every path of openapi/master.yaml, typed.
  readonly api: Client<paths>;

  constructor(url = "http://127.0.0.1:8080", token?: string) {
    // openapi-fetch sends JSON bodies (Content-Type: application/json) and parses JSON answers;
    // the master answers JSON to a request whose Accept names no MessagePack type.
    this.api = createClient<paths>({
      baseUrl: url.replace(/\/+$/, ""),
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    });
  }

  // Pushes one job (a NewJob: name plus the optional fields of the contract's job table); its
  // id, which is the existing job's when the push was a duplicate of a unique job (200), also
  // when it was merged into that job (on_duplicate "replace" or "append": a debounce, a list).
  async push(job: NewJob): Promise<string> {
    const { data } = await ok(this.api.POST("/v1/jobs", { body: job, signal: within(30) }));
    if (data && "id" in data) return data.id;
    throw new Error("push answered without an id");
  }

  // Pushes 1-1000 jobs at once, all or none. Their ids in the same order.
  async pushBatch(jobs: NewJob[]): Promise<string[]> {
    const { data } = await ok(this.api.POST("/v1/jobs", { body: jobs, signal: within(30) }));
    if (data && "ids" in data) return data.ids;
    throw new Error("push answered without ids");
  }

  // The job's state: {id, name, state, attempts, ...}. JqError not_found once it is gone.
  async job(id: string): Promise<Job> {
    const { data } = await ok(this.api.GET("/v1/jobs/{id}", { params: { path: { id } }, signal: within(30) }));
    if (!data) throw new Error(`no job in the answer for ${id}`);
    return data;
  }

  // Cancels a queued or scheduled job. JqError conflict (409) when it is already running.
  async cancel(id: string): Promise<void> {
    await ok(this.api.DELETE("/v1/jobs/{id}", { params: { path: { id } }, signal: within(30) }));
  }

  // The result object of a finished job pushed with keep_result: true, fetched once:
  // {type: "success", result, ...} or {type: "failure", message, error, ...}. Waits up to `wait`
  // seconds for it (long polls of at most 60 s each); null if the job has not finished by then.
  // Throws NoResult when there is nothing to fetch.
  async result(id: string, wait = 0): Promise<JobResult | null> {
    const deadline = Date.now() + wait * 1000;
    for (;;) {
      const left = Math.max(0, Math.min(60, (deadline - Date.now()) / 1000));
      const { status, data } = await ok(this.api.GET("/v1/jobs/{id}/result", {
        params: { path: { id }, query: { wait: Number(left.toFixed(3)) } },
        signal: within(left + 10),
      }));
      // 200: the result object, or null when there is none; 202: {id, state, attempts}.
      if (status === 200 && data == null) throw new NoResult(`no result to fetch for job ${id}`);
      if (status === 200 && data != null && "type" in data) return data;
      if (Date.now() >= deadline) return null; // 202: still queued, scheduled or running
    }
  }
}

const show = (value: unknown) => inspect(value, { breakLength: Infinity, depth: null });

// A result object in a few words: the value, or why the job failed.
function outcome(answer: JobResult | null): string {
  if (answer == null) return "not finished in time";
  if (answer.type === "success") return show(answer.result);
  return `${answer.type} (${answer.reason}): ${answer.message}`;
}

async function main() {
  const { values: args } = parseArgs({
    options: { master: { type: "string" }, token: { type: "string" }, help: { type: "boolean" } },
  });
  if (args.help) {
    console.log("usage: node dist/pusher.js [--master URL] [--token TOKEN]");
    return;
  }
  const master = args.master ?? process.env.JQ_URL ?? "http://127.0.0.1:8080";
  const jq = new JqClient(master, args.token ?? process.env.JQ_TOKEN); // the token: if auth is on

  // One job: keep_result keeps its result until we fetch it (once). Fields left out (here
  // max_retry and timeout) take the master's defaults.
  let id = await jq.push({ name: "sum", argument: [1, 2, 3], priority: 1, keep_result: true });
  console.log(`pushed sum [1, 2, 3] as ${id}: ${(await jq.job(id)).state}`);
  console.log(`sum [1, 2, 3] = ${outcome(await jq.result(id, 30))}`);

  // A batch: stored all or nothing; results come back exactly as sent. (JSON has no binary
  // type: bytes need a MessagePack client such as examples/node/pusher.mjs.)
  const samples = ["h\u00e9llo", { nested: [1, 2.5, null, true, "\u00ff"] }, [-1, 0, 65536, "x", []]];
  const ids = await jq.pushBatch(samples.map((argument) => ({ name: "echo", argument, keep_result: true })));
  console.log(`pushed a batch of ${ids.length}: ${ids.join(", ")}`);
  for (const [i, sent] of samples.entries()) {
    console.log(`echo ${show(sent)} -> ${outcome(await jq.result(ids[i], 30))}`);
  }

  // A job that fails: with max_retry 0 it is dead at once; the result says why.
  id = await jq.push({ name: "sum", argument: "not a list", max_retry: 0, keep_result: true });
  console.log(`sum 'not a list' -> ${outcome(await jq.result(id, 30))}`);

  // Cancelling works while a job waits: `nobody` has no worker here.
  id = await jq.push({ name: "nobody", argument: { report: 7 } });
  try {
    await jq.cancel(id);
    console.log(`cancelled ${id}`);
    await jq.job(id);
  } catch (e) { // not_found after the cancel; conflict if it was already running
    if (!(e instanceof JqError)) throw e;
    console.log(`job ${id}: ${e.status} ${e.error}: ${e.message}`);
  }

  // Bad input: the answer names the error, the field and, in a batch, the index. The types
  // catch the typo `max_retries` at compile time, so it is forced through to show the master's
  // answer to a client without them.
  const typo = { name: "sum", max_retries: 2 } as unknown as NewJob;
  for (const bad of [[{ name: "sum" }, typo], [{ name: "-no" }]]) {
    try {
      await jq.pushBatch(bad);
    } catch (e) {
      if (!(e instanceof JqError)) throw e;
      console.log(`refused: ${e.status} ${e.error} index=${e.index} field=${e.field}: ${e.message}`);
    }
  }
}

main().catch((e: unknown) => {
  if (e instanceof JqError) console.error(`jqmaster said ${e.status} ${e.error}: ${e.message}`);
  else if (e instanceof TypeError && e.cause instanceof Error) console.error(`cannot reach jqmaster: ${e.cause.message}`);
  else console.error(e); // fetch timeouts (TimeoutError) and bugs
  process.exitCode = 1;
});
