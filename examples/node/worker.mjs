#!/usr/bin/env node
// A jqmaster worker in Node.js: the whole worker API with the built-in `http` and `fetch`, plus
// @msgpack/msgpack (npm). Node 18 or newer.
//
// The master POSTs one job per request, a MessagePack map
//     {id, name, argument, priority, attempt, max_retry, timeout, deadline}
// and reads the result from the response, a MessagePack map too:
//     success: {type: "success", finished_at, result}
//     failure: {type: "failure", reason: "other", finished_at, should_retry, error, message}
// Answering 429 or 503 instead means "busy, try another worker": the attempt does not count.
//
// With JQ_WORKER_SECRET set (16-256 bytes), the worker registers with that secret and refuses
// (401) any request whose X-Jq-Signature does not verify (signature.mjs, next to this file).
//
//     cd examples/node && npm ci
//     node worker.mjs --listen 127.0.0.1:9002 --master http://127.0.0.1:8080 --names sum,echo

import http from "node:http";
import { parseArgs } from "node:util";
import { decode, encode } from "@msgpack/msgpack";
import { verify } from "./signature.mjs";

const MSGPACK = "application/msgpack";
const MAX_BODY_BYTES = 16 * 1024 * 1024; // refuse anything bigger than this
class TooLarge extends Error {}

// The work itself: `sum` adds up a list of numbers, any other name echoes its argument.
// Throwing here turns into a failure result that asks the master to retry.
async function runJob(name, argument) {
  if (name === "sum") {
    if (!Array.isArray(argument)) throw new TypeError("sum needs a list of numbers");
    return argument.reduce((total, x) => total + x, 0);
  }
  return argument; // binary values stay Uint8Array, and go back as MessagePack bin
}

const success = (result) => ({ type: "success", finished_at: new Date().toISOString(), result });

const failure = (error, message, shouldRetry = true) => ({
  type: "failure",
  reason: "other",
  finished_at: new Date().toISOString(),
  should_retry: shouldRetry, // the master retries while the job has retries left
  error, // any value: kept in the result for the pusher
  message, // for people: shown as the job's last_error
});

async function readBody(request) {
  const chunks = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new TooLarge("body too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function send(response, status, contentType, body) {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  response.writeHead(status, { "Content-Type": contentType, "Content-Length": bytes.length });
  response.end(bytes);
}

async function handle(request, response) {
  if (request.method !== "POST") return send(response, 405, "text/plain", "POST a job\n");
  let job;
  try {
    const body = await readBody(request);
    if (secret && !verify(secret, request.headers, body)) {
      return send(response, 401, "text/plain", "X-Jq-Signature does not verify\n");
    }
    job = decode(body);
    if (typeof job?.name !== "string") throw new TypeError("no job name");
  } catch (e) { // not our kind of request: say so, there is no job to fail
    const status = e instanceof TooLarge ? 413 : 400;
    return send(response, status, "text/plain", `expected a MessagePack job map: ${e.message}\n`);
  }
  let result;
  try {
    result = success(await runJob(job.name, job.argument));
  } catch (e) {
    result = failure(e.name, `${job.name} failed on attempt ${job.attempt}: ${e.message}`);
  }
  send(response, 200, MSGPACK, Buffer.from(encode(result)));
  console.error(`${job.id} ${job.name} attempt ${job.attempt}: ${result.type}`);
}

// POST /v1/workers: tells the master where we are and which job names we run.
async function register(master, url, names, concurrency, token) {
  const registration = { url, names, concurrency };
  if (secret) registration.secret = secret; // the master signs every job with it (never shown back)
  const headers = { "Content-Type": MSGPACK, Accept: MSGPACK };
  if (token) headers.Authorization = `Bearer ${token}`; // with auth: a token with the worker role
  const response = await fetch(`${master.replace(/\/+$/, "")}/v1/workers`, {
    method: "POST",
    headers,
    body: encode(registration),
    signal: AbortSignal.timeout(5000),
  });
  const raw = new Uint8Array(await response.arrayBuffer());
  const body = raw.length ? decode(raw) : {};
  if (!response.ok) throw new Error(`${response.status} ${body.error}: ${body.message}`);
  return body.id;
}

// The master may not be up yet: keep trying every second.
async function registerUntilDone(master, url, names, concurrency, token) {
  for (;;) {
    try {
      const id = await register(master, url, names, concurrency, token);
      return console.error(`registered with ${master} as worker ${id}`);
    } catch (e) {
      console.error(`registering with ${master} failed: ${e.cause?.message ?? e.message}; retrying`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

const { values: opts } = parseArgs({
  options: {
    ...Object.fromEntries(["listen", "master", "names", "concurrency", "token"].map((o) => [o, { type: "string" }])),
    help: { type: "boolean" },
  },
});
if (opts.help) {
  console.log("usage: node worker.mjs [--listen HOST:PORT] [--master URL] [--names a,b] [--concurrency N] [--token TOKEN]");
  process.exit(0);
}
const args = {
  listen: opts.listen ?? "127.0.0.1:9002", // host:port; port 0 picks one
  master: opts.master ?? process.env.JQ_URL, // master URL to register with, e.g. http://127.0.0.1:8080
  names: opts.names ?? "*", // job names served, comma-separated
  concurrency: Number(opts.concurrency ?? 4), // jobs at once
  token: opts.token ?? process.env.JQ_TOKEN, // bearer token (worker role) when the master has auth
};
// From the environment only: a command-line argument would show in `ps`.
const secret = process.env.JQ_WORKER_SECRET || undefined;
const at = args.listen.lastIndexOf(":");
const host = args.listen.slice(0, at);

const server = http.createServer((request, response) => {
  handle(request, response).catch((e) => {
    if (!response.headersSent) send(response, 400, "text/plain", `${e.message}\n`);
    else response.destroy();
  });
});
server.keepAliveTimeout = 60_000; // the master reuses its connections
server.listen(Number(args.listen.slice(at + 1)), host, () => {
  const own = `${host}:${server.address().port}`;
  console.log(`listening on ${own}`);
  // Only now: the server must already answer when the master sends the first job.
  if (args.master) {
    const names = args.names.split(",");
    registerUntilDone(args.master, `http://${own}/`, names, args.concurrency, args.token);
  } else {
    console.error("not registering (no --master, no JQ_URL): register this worker's URL yourself (jqctl workers register, or POST /v1/workers)");
  }
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0));
