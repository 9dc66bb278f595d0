#!/usr/bin/env node
// The BullMQ side of bench/compare.sh: the workloads jqbench runs against jqmaster, done with
// BullMQ on the same Redis, printed as one JSON line with jqbench's field names.
//
//   node bench.js --scenario add|drain|e2e|latency|steady|memory --redis redis://127.0.0.1:6379
//                 [--jobs N] [--batch B] [--inflight K] [--concurrency C] [--priorities] [--echo]
//                 [--rate R] [--duration S] [--warmup S] [--arg-bytes N] [--redis-pid PID]
//                 [--label TEXT]
//
// add      Queue.add (batch 1) or Queue.addBulk (batch B), K calls in flight: jobs/s acknowledged.
// drain    N jobs added first (addBulk), then a Worker (concurrency C) is started in this
//          process: jobs/s from worker.run() to the Nth 'completed' event.
// e2e      a Worker in a child process and the producer in this one, started together: jobs/s
//          from the first add to the Nth 'completed' event.
// latency  single adds at a fixed rate (open loop: sent on a timer, never waiting for answers),
//          the Worker in a child process; per job, from the add call to: its promise resolving
//          (ack), the processor being called (done), the 'completed' event (completed).
// steady   single adds at a fixed rate, open loop, the Worker in a child process; right after
//          each add resolves, job.waitUntilFinished(queueEvents) (one QueueEvents in this
//          process): per job, from the add call to the result in hand (result). Jobs are kept
//          an hour after completion (removeOnComplete: {age: 3600}, jqmaster's result_ttl):
//          waitUntilFinished looks the job up, and reports a removed job as failed.
// memory   Redis used_memory before and after N waiting jobs, per job.
//
// Every job has data = a string of --arg-bytes 'x' (jqbench's argument), removeOnComplete and
// removeOnFail (jqmaster's keep_result=false; steady: see above), and with --priorities a
// priority 1..10 at random. The processor returns null, or with --echo the job's data (the
// worker decodes the job and encodes an answer, as jqbench's external workers do). CPU per job
// counts Redis (--redis-pid) and every Node process of the run, from /proc; add, drain, e2e and
// steady also report Redis's commands per job (INFO commandstats before and after).
'use strict';

const { fork, execFileSync } = require('child_process');
const fs = require('fs');
const { Queue, QueueEvents, Worker } = require('bullmq');
const IORedis = require('ioredis');

const QUEUE = 'bench';
const FILL_BATCH = 1000;
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

function parseArgs(argv) {
  const o = {
    scenario: 'add', redis: 'redis://127.0.0.1:6379', jobs: 0, batch: 1, inflight: 16,
    concurrency: 50, priorities: false, echo: false, rate: 2000, duration: 5, warmup: 0.5,
    argBytes: 0, redisPid: 0, label: '', role: 'main',
  };
  const names = { 'arg-bytes': 'argBytes', 'redis-pid': 'redisPid' };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '');
    const name = names[key] || key;
    if (!(name in o)) throw new Error(`unknown flag ${argv[i]}`);
    if (typeof o[name] === 'boolean') o[name] = true;
    else if (typeof o[name] === 'number') o[name] = Number(argv[++i]);
    else o[name] = argv[++i];
  }
  return o;
}

function connectionOf(url) {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 6379), maxRetriesPerRequest: null };
}

const now = () => Number(process.hrtime.bigint()) / 1e6; // ms, CLOCK_MONOTONIC (shared by processes)

// [user, system] CPU seconds of a process so far; a process that is gone counts as 0.
function cpuTimes(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [Number(fields[11]) / CLK_TCK, Number(fields[12]) / CLK_TCK]; // utime, stime (fields 14, 15)
  } catch (e) {
    return [0, 0];
  }
}

class CpuMeter {
  constructor(processes) { this.processes = processes.filter((p) => p.pid > 0); }
  start() { this.before = this.processes.map((p) => cpuTimes(p.pid)); }
  stop() {
    this.shares = {};
    this.system = {};
    this.processes.forEach((p, i) => {
      const [user, system] = cpuTimes(p.pid);
      this.system[p.label] = round(system - this.before[i][1]);
      this.shares[p.label] = round(user - this.before[i][0] + system - this.before[i][1]);
    });
  }
  fields(jobs) {
    const total = Object.values(this.shares).reduce((a, b) => a + b, 0);
    return {
      cpu_s: round(total), cpu_us_per_job: round((total * 1e6) / jobs), cpu_s_by_process: this.shares,
      cpu_sys_s_by_process: this.system,
    };
  }
}

function round(v) {
  if (!Number.isFinite(v) || v === 0) return v;
  const scale = Math.abs(v) >= 100 ? 1 : Math.abs(v) >= 1 ? 1000 : 1e6;
  return Math.round(v * scale) / scale;
}

function percentiles(prefix, samples) {
  const s = Float64Array.from(samples).sort();
  const at = (q) => (s.length ? s[Math.min(s.length, Math.max(1, Math.ceil(q * s.length))) - 1] : 0);
  return {
    [`${prefix}_p50_ms`]: round(at(0.5)), [`${prefix}_p90_ms`]: round(at(0.9)),
    [`${prefix}_p99_ms`]: round(at(0.99)), [`${prefix}_p999_ms`]: round(at(0.999)),
    [`${prefix}_max_ms`]: round(at(1)),
  };
}

// INFO commandstats: {command: {calls, usec}}.
async function commandStats(redis) {
  const out = {};
  for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    out[m[1]] = { calls: Number(m[2]), usec: Number(m[3]) };
  }
  return out;
}

// Redis's commands per job between two INFO commandstats, as jqbench reports them:
// {redis_by_command: {command: [calls per job, µs per job]}} for commands run at least once per
// 100 jobs. Commands run inside scripts count under their own names too.
class RedisMeter {
  constructor(o) { this.redis = new IORedis(connectionOf(o.redis)); }
  async start() { this.before = await commandStats(this.redis); }
  async stop() { this.after = await commandStats(this.redis); this.redis.disconnect(); }
  fields(jobs) {
    const byCommand = {};
    for (const [name, a] of Object.entries(this.after)) {
      const b = this.before[name] || { calls: 0, usec: 0 };
      const calls = (a.calls - b.calls) / jobs;
      if (calls >= 0.01) byCommand[name] = [round(calls), round((a.usec - b.usec) / jobs)];
    }
    return { redis_by_command: byCommand };
  }
}

function jobMaker(o, removeOnComplete = true) {
  const data = 'x'.repeat(o.argBytes);
  const opts = () => {
    const base = { removeOnComplete, removeOnFail: true };
    if (o.priorities) base.priority = 1 + Math.floor(Math.random() * 10);
    return base;
  };
  return { data, opts, bulk: (n) => Array.from({ length: n }, () => ({ name: QUEUE, data, opts: opts() })) };
}

// K loops, each adding the next job (or batch) once the previous one is acknowledged.
async function addJobs(queue, o, total, batch, samples) {
  const jobs = jobMaker(o);
  let claimed = 0;
  const loop = async () => {
    for (;;) {
      const n = Math.min(batch, total - claimed);
      if (n <= 0) return;
      claimed += n;
      const sent = now();
      if (batch === 1) await queue.add(QUEUE, jobs.data, jobs.opts());
      else await queue.addBulk(jobs.bulk(n));
      if (samples) samples.push(now() - sent);
    }
  };
  await Promise.all(Array.from({ length: o.inflight }, loop));
}

function processorOf(o, record) {
  return async (job) => {
    if (record) record.set(job.id, now());
    return o.echo ? job.data : null;
  };
}

function newWorker(o, processor, autorun) {
  return new Worker(QUEUE, processor, { connection: connectionOf(o.redis), concurrency: o.concurrency, autorun });
}

function print(o, fields) {
  const line = { scenario: o.scenario, ...fields };
  if (o.label) line.label = o.label;
  console.log(JSON.stringify(line));
}

async function scenarioAdd(o, queue) {
  const total = o.jobs || 100000;
  const samples = [];
  const redis = new RedisMeter(o);
  await redis.start();
  const cpu = new CpuMeter([{ label: 'redis', pid: o.redisPid }, { label: 'producer', pid: process.pid }]);
  cpu.start();
  const t0 = now();
  await addJobs(queue, o, total, o.batch, samples);
  const seconds = (now() - t0) / 1000;
  cpu.stop();
  await redis.stop();
  print(o, {
    jobs: total, seconds: round(seconds), jobs_per_s: round(total / seconds), batch: o.batch,
    inflight: o.inflight, priorities: o.priorities, ...percentiles('ack', samples), ...cpu.fields(total),
    ...redis.fields(total),
  });
}

async function scenarioDrain(o, queue) {
  const total = o.jobs || 50000;
  await addJobs(queue, { ...o, inflight: Math.max(1, Math.min(o.inflight, 8)) }, total, FILL_BATCH, null);
  const worker = newWorker(o, processorOf(o, null), false);
  await worker.waitUntilReady();
  let done = 0;
  const finished = new Promise((resolve) => {
    worker.on('completed', () => { if (++done === total) resolve(now()); });
  });
  const redis = new RedisMeter(o);
  await redis.start();
  const cpu = new CpuMeter([{ label: 'redis', pid: o.redisPid }, { label: 'worker', pid: process.pid }]);
  cpu.start();
  const t0 = now();
  worker.run();
  const t1 = await finished;
  cpu.stop();
  await redis.stop();
  await worker.close();
  print(o, {
    jobs: total, seconds: round((t1 - t0) / 1000), jobs_per_s: round(total / ((t1 - t0) / 1000)),
    worker_concurrency: o.concurrency, priorities: o.priorities, echo: o.echo, ...cpu.fields(total),
    ...redis.fields(total),
  });
}

// The Worker in a child process (this file with --role worker): it says 'ready', counts
// 'completed' events and, at the expected count, reports when (and, for latency, per job).
function startWorkerChild(o, expected, record) {
  const args = ['--role', 'worker', '--redis', o.redis, '--concurrency', String(o.concurrency), '--jobs', String(expected)];
  if (record) args.push('--scenario', 'latency');
  if (o.echo) args.push('--echo');
  const child = fork(__filename, args);
  const exited = new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`the worker process exited (${code})`)));
  });
  const ready = Promise.race([exited, new Promise((resolve) => child.on('message', (m) => m.type === 'ready' && resolve()))]);
  const done = Promise.race([exited, new Promise((resolve) => child.on('message', (m) => m.type === 'done' && resolve(m)))]);
  exited.catch(() => {}); // a clean exit after 'done' is no error
  done.catch(() => {}); // nor is one that ends a worker nobody waits on (steady kills its own)
  return { child, ready, done };
}

async function workerRole(o) {
  const record = o.scenario === 'latency';
  const processed = record ? new Map() : null;
  const completed = record ? new Map() : null;
  const worker = newWorker(o, processorOf(o, processed), true);
  let count = 0;
  worker.on('completed', (job) => {
    if (record) completed.set(job.id, now());
    if (++count === o.jobs) {
      const msg = { type: 'done', at: now() };
      if (record) { msg.processed = [...processed]; msg.completed = [...completed]; }
      process.send(msg, () => worker.close().then(() => process.exit(0)));
    }
  });
  await worker.waitUntilReady();
  process.send({ type: 'ready' });
}

async function scenarioE2e(o, queue) {
  const total = o.jobs || 100000;
  const w = startWorkerChild(o, total, false);
  await w.ready;
  const redis = new RedisMeter(o);
  await redis.start();
  const cpu = new CpuMeter([
    { label: 'redis', pid: o.redisPid }, { label: 'producer', pid: process.pid }, { label: 'worker', pid: w.child.pid },
  ]);
  cpu.start();
  const t0 = now();
  await addJobs(queue, o, total, o.batch, null);
  const { at } = await w.done;
  cpu.stop();
  await redis.stop();
  print(o, {
    jobs: total, seconds: round((at - t0) / 1000), jobs_per_s: round(total / ((at - t0) / 1000)), batch: o.batch,
    inflight: o.inflight, worker_concurrency: o.concurrency, priorities: o.priorities, echo: o.echo,
    ...cpu.fields(total), ...redis.fields(total),
  });
}

// Calls send(index, scheduled) for `total` jobs at o.rate on a timer (open loop), and
// atWarmupEnd() just before the first job that counts; resolves once every send has been made.
function schedule(o, total, warmupJobs, send, atWarmupEnd) {
  const period = 1000 / o.rate;
  const t0 = now() + 10;
  let i = 0;
  return new Promise((resolve) => {
    const tick = () => {
      const t = now();
      for (; i < total && t0 + i * period <= t; i++) {
        if (i === warmupJobs) atWarmupEnd();
        send(i, t0 + i * period);
      }
      if (i < total) setTimeout(tick, Math.max(0, t0 + i * period - now()));
      else resolve();
    };
    tick();
  });
}

const settle = async (pending) => { while (pending() > 0) await new Promise((r) => setTimeout(r, 2)); };

async function scenarioLatency(o, queue) {
  const warmupJobs = Math.round(o.rate * o.warmup);
  const measuredJobs = o.jobs || Math.round(o.rate * o.duration);
  const total = warmupJobs + measuredJobs;
  const w = startWorkerChild(o, total, true);
  await w.ready;
  const jobs = jobMaker(o);
  const sent = new Map(); // id -> [scheduled, sent, acked] of measured jobs
  let outstanding = 0;
  const cpu = new CpuMeter([{ label: 'redis', pid: o.redisPid }, { label: 'producer', pid: process.pid }, { label: 'worker', pid: w.child.pid }]);
  const send = (index, scheduled) => {
    const at = now();
    outstanding++;
    queue.add(QUEUE, jobs.data, jobs.opts()).then((job) => {
      outstanding--;
      if (index >= warmupJobs) sent.set(job.id, [scheduled, at, now()]);
    });
  };
  await schedule(o, total, warmupJobs, send, () => cpu.start());
  const result = await w.done;
  await settle(() => outstanding);
  cpu.stop();
  const processed = new Map(result.processed);
  const completed = new Map(result.completed);
  const ack = [], done = [], fin = [], lag = [];
  for (const [id, [scheduled, at, acked]] of sent) {
    ack.push(acked - at);
    lag.push(at - scheduled);
    if (processed.has(id)) done.push(processed.get(id) - at);
    if (completed.has(id)) fin.push(completed.get(id) - at);
  }
  const lagP = percentiles('lag', lag);
  print(o, {
    jobs: sent.size, rate_offered_per_s: o.rate, warmup_jobs: warmupJobs, worker_concurrency: o.concurrency,
    priorities: o.priorities, ...percentiles('ack', ack), ...percentiles('done', done),
    ...percentiles('completed', fin), send_lag_p99_ms: lagP.lag_p99_ms, send_lag_max_ms: lagP.lag_max_ms,
    ...cpu.fields(sent.size),
  });
}

async function scenarioSteady(o, queue) {
  const warmupJobs = Math.round(o.rate * o.warmup);
  const measuredJobs = o.jobs || Math.round(o.rate * o.duration);
  const total = warmupJobs + measuredJobs;
  // Expecting no count, the worker never reports 'done': it is stopped once its CPU is read.
  const w = startWorkerChild(o, 0, false);
  await w.ready;
  const events = new QueueEvents(QUEUE, { connection: connectionOf(o.redis) });
  await events.waitUntilReady();
  const jobs = jobMaker(o, { age: 3600 });
  const ack = [], result = [], lag = [];
  let outstanding = 0;
  let error = null;
  const cpu = new CpuMeter([{ label: 'redis', pid: o.redisPid }, { label: 'producer', pid: process.pid }, { label: 'worker', pid: w.child.pid }]);
  const redis = new RedisMeter(o);
  await redis.start();
  const send = async (index, scheduled) => {
    const at = now();
    outstanding++;
    try {
      const job = await queue.add(QUEUE, jobs.data, jobs.opts());
      const acked = now();
      await job.waitUntilFinished(events, 30000);
      if (index >= warmupJobs) {
        ack.push(acked - at);
        result.push(now() - at);
        lag.push(at - scheduled);
      }
    } catch (e) {
      error = error || e;
    }
    outstanding--;
  };
  await schedule(o, total, warmupJobs, send, () => cpu.start());
  await settle(() => outstanding);
  cpu.stop();
  await redis.stop();
  w.child.kill();
  await events.close();
  if (error) throw error;
  const lagP = percentiles('lag', lag);
  print(o, {
    jobs: result.length, rate_offered_per_s: o.rate, warmup_jobs: warmupJobs, worker_concurrency: o.concurrency,
    priorities: o.priorities, echo: o.echo, ...percentiles('ack', ack), ...percentiles('result', result),
    send_lag_p99_ms: lagP.lag_p99_ms, send_lag_max_ms: lagP.lag_max_ms, ...cpu.fields(result.length),
    ...redis.fields(total),
  });
}

async function usedMemory(redis) {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)[1]);
}

async function scenarioMemory(o, queue) {
  const total = o.jobs || 100000;
  const redis = new IORedis(connectionOf(o.redis));
  const before = await usedMemory(redis);
  await addJobs(queue, o, total, Math.max(o.batch, 1), null);
  const after = await usedMemory(redis);
  redis.disconnect();
  print(o, {
    jobs: total, arg_bytes: o.argBytes, priorities: o.priorities, used_memory_before: before,
    used_memory_after: after, bytes_per_job: round((after - before) / total),
  });
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.role === 'worker') return workerRole(o);
  const scenarios = {
    add: scenarioAdd, drain: scenarioDrain, e2e: scenarioE2e, latency: scenarioLatency, steady: scenarioSteady,
    memory: scenarioMemory,
  };
  const run = scenarios[o.scenario];
  if (!run) throw new Error(`unknown scenario ${o.scenario}`);
  const queue = new Queue(QUEUE, { connection: connectionOf(o.redis) });
  await queue.waitUntilReady();
  await run(o, queue);
  await queue.close();
  process.exit(0);
}

main().catch((e) => {
  console.error(`bench.js: ${e.stack || e}`);
  process.exit(1);
});
