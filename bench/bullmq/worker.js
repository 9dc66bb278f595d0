#!/usr/bin/env node
// A minimal jqmaster worker in Node, for bench/compare.sh: the Node side of "Node worker against
// Node worker" (BullMQ's Worker in its own process against this one behind jqmaster). It does
// what a worker does per job and nothing more: reads the POSTed MessagePack job, decodes it
// (msgpackr, the library BullMQ itself uses), runs an echo (the result is the job's argument,
// as bench.js's BullMQ processor returns job.data) and encodes the success answer, MessagePack
// or JSON (--answer). No logging per job. jqbench registers it with the master
// (--external-worker), so it only listens:
//
//   node bench/bullmq/worker.js --listen 127.0.0.1:0 [--answer msgpack|json]
//
// It prints "listening on HOST:PORT" once it accepts connections. Keep-alive connections stay
// open for the master's pool (keepAliveTimeout 60 s, as the example worker).
'use strict';

const http = require('http');
const { Packr, Unpackr } = require('msgpackr');

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false });

function parseArgs(argv) {
  const o = { listen: '127.0.0.1:0', answer: 'msgpack' };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in o)) throw new Error(`unknown flag ${argv[i]}`);
    o[key] = argv[++i];
  }
  if (o.answer !== 'msgpack' && o.answer !== 'json') throw new Error('--answer is msgpack or json');
  return o;
}

const o = parseArgs(process.argv.slice(2));
const json = o.answer === 'json';

function answer(response, status, type, body) {
  response.writeHead(status, { 'Content-Type': type, 'Content-Length': body.length });
  response.end(body);
}

const server = http.createServer((request, response) => {
  const chunks = [];
  let size = 0;
  request.on('data', (chunk) => {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  });
  request.on('end', () => {
    if (request.method !== 'POST' || size > MAX_BODY_BYTES) {
      return answer(response, 400, 'text/plain', Buffer.from('POST a job of at most 16 MiB\n'));
    }
    let job;
    try {
      job = unpackr.unpack(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    } catch (e) {
      return answer(response, 400, 'text/plain', Buffer.from(`not MessagePack: ${e.message}\n`));
    }
    const result = { type: 'success', finished_at: new Date().toISOString(), result: job.argument ?? null };
    if (json) answer(response, 200, 'application/json', Buffer.from(JSON.stringify(result)));
    else answer(response, 200, 'application/msgpack', packr.pack(result));
  });
});
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;
const at = o.listen.lastIndexOf(':');
server.listen(Number(o.listen.slice(at + 1)), o.listen.slice(0, at), () => {
  console.log(`listening on ${o.listen.slice(0, at)}:${server.address().port}`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
