// The dashboard end to end, in Debian's headless Chromium driven by playwright-core.
//
// Starts a real redis-server, build/cmd/jqmaster (auth on, one admin token, a free loopback port)
// and build/cmd/jqworker (registered through the API), fills the queues through the API, then
// opens the page the way an operator would: it enters the token when the page asks, reads the
// queue's ready count, clicks Resume and Pause (checked through the API), reads a constraint's
// numbers and top keys, pauses, resumes and edits its limits (checked through the API), reads a
// schedule's timetable and next run, runs it now, pauses and resumes it (checked through the
// API), retries a dead job (checked through the API), browses a queue's jobs and the dead ones,
// cancels a waiting job and retries and deletes dead ones from the job browser (checked through
// the API), and saves a screenshot to build/dashboard.png.
//
// Every process is started here and stopped by its PID, also when a step fails. Prints one line
// per check and "N passed, N failed"; exits 1 when a check failed.
//
// Environment: JQ_BUILD_DIR (default: build/ at the repository root), CHROMIUM (default
// /usr/bin/chromium), REDIS_SERVER (default redis-server on PATH).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BUILD = process.env.JQ_BUILD_DIR || path.join(ROOT, 'build');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const REDIS_SERVER = process.env.REDIS_SERVER || 'redis-server';
const SCREENSHOT = path.join(BUILD, 'dashboard.png');
const FAILURE_SCREENSHOT = path.join(BUILD, 'dashboard-failure.png');
const ADMIN_TOKEN = 'dashboard-test-admin-7f3a91c2e5';
const OVERALL_TIMEOUT_MS = 180_000;
// What cpp.md says Chromium needs on these machines: no sandbox as root, no GPU, and none of the
// background connections a closed network refuses.
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

const HELD = 'dash.held';       // filled while paused, so its jobs stay ready
const ECHO = 'dash.echo';       // runs, for the throughput chart
const DOOMED = 'dash.doomed';   // fails for good (status 500, max_retry 0)
const LIMITED = 'dash.limited'; // long jobs under a constraint of one at a time per tenant
const CONSTRAINT = 'dash-per-tenant';
const SCHEDULE = 'dash-nightly';     // a schedule whose job no worker serves: what it makes stays
const SLOW_SECRET = 'dash-slow-worker-secret-5d1e'; // the slow worker is signed: shown, never its secret

// --- processes ---------------------------------------------------------------------------------

const children = [];
const tmp = mkdtempSync(path.join(os.tmpdir(), 'jq-dashboard-'));

function start(name, argv, options = {}) {
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  child.name = name;
  child.output = '';
  const keep = (chunk) => { child.output = (child.output + chunk).slice(-20000); };
  child.stderr.on('data', keep);
  if (!options.keepStdout) child.stdout.on('data', keep);
  children.push(child);
  return child;
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
  }, 10_000);
  await exited;
  clearTimeout(timer);
}

async function stopAll() {
  for (const child of children.reverse()) {
    try {
      await stop(child);
    } catch (e) {
      console.error(`stopping ${child.name} (pid ${child.pid}): ${e.message}`);
    }
  }
  children.length = 0;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

// Polls `probe` until it returns a truthy value; the error names `what`.
async function until(what, probe, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
    }
    await sleep(100);
  }
}

function redisPing(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(1000);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => { socket.destroy(); resolve(data.toString().startsWith('+PONG')); });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => { socket.destroy(); resolve(false); });
  });
}

// One command to Redis; resolves with its reply's first line (enough for +OK).
function redisCommand(port, ...args) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(5000);
    socket.on('connect', () => socket.write(`*${args.length}\r\n${args.map((a) => `$${a.length}\r\n${a}\r\n`).join('')}`));
    socket.on('data', (data) => { socket.destroy(); resolve(data.toString().split('\r\n')[0]); });
    socket.on('error', reject);
    socket.on('timeout', () => { socket.destroy(); reject(new Error(`redis ${args.join(' ')}: no answer`)); });
  });
}

async function startRedis() {
  const port = await freePort();
  const child = start('redis-server', [REDIS_SERVER, '--port', String(port), '--bind', '127.0.0.1',
    '--save', '', '--appendonly', 'no', '--dir', tmp]);
  await until('redis-server to answer PING', () => redisPing(port));
  return { child, port };
}

async function startMaster(redisPort) {
  const port = await freePort();
  const config = path.join(tmp, 'jqmaster.yaml');
  writeFileSync(config, [
    `listen: 127.0.0.1:${port}`,
    `data_dir: ${path.join(tmp, 'data')}`,
    'shards: 4',
    'redis:',
    `  url: "redis://127.0.0.1:${redisPort}/0"`,
    'auth:',
    '  tokens:',
    `    - {token: ${ADMIN_TOKEN}, role: admin}`,
    '',
  ].join('\n'));
  const child = start('jqmaster', [path.join(BUILD, 'cmd', 'jqmaster'), '--config', config]);
  const base = `http://127.0.0.1:${port}`;
  await until('jqmaster /readyz to answer 200', async () => {
    if (child.exitCode !== null) throw new Error(`jqmaster exited ${child.exitCode}: ${child.output}`);
    return (await fetch(`${base}/readyz`)).status === 200;
  });
  return { child, base };
}

// jqworker prints "listening on HOST:PORT" as its first line.
async function startWorker() {
  const child = start('jqworker', [path.join(BUILD, 'cmd', 'jqworker'), '--listen', '127.0.0.1:0'],
    { keepStdout: true });
  const lines = readline.createInterface({ input: child.stdout });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => line),
    sleep(10_000).then(() => { throw new Error(`jqworker printed no address: ${child.output}`); }),
  ]);
  lines.on('line', () => {}); // keep draining
  const match = /^listening on (\S+:\d+)$/.exec(first);
  assert.ok(match, `jqworker's first line: ${first}`);
  return { child, url: `http://${match[1]}/` };
}

// --- the API -----------------------------------------------------------------------------------

function apiClient(base) {
  return async function call(method, target, body) {
    const headers = { Accept: 'application/json', Authorization: `Bearer ${ADMIN_TOKEN}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(base + target, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}

// --- the checks --------------------------------------------------------------------------------

const results = { passed: 0, failed: 0 };

async function check(name, fn) {
  try {
    await fn();
    results.passed += 1;
    console.log(`ok   ${name}`);
    return true;
  } catch (e) {
    results.failed += 1;
    console.log(`FAIL ${name}: ${e.stack || e}`);
    return false;
  }
}

async function fill(api, workerUrl) {
  const registered = await api('POST', '/v1/workers', { url: workerUrl, names: [ECHO, DOOMED], concurrency: 4 });
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
  assert.equal((await api('POST', `/v1/queues/${HELD}/pause`)).status, 200);
  const held = await api('POST', '/v1/jobs', Array.from({ length: 7 }, (_, i) => ({ name: HELD, argument: { n: i } })));
  assert.equal(held.status, 201, JSON.stringify(held.body));
  const doomed = await api('POST', '/v1/jobs', [1, 2].map((n) => ({ name: DOOMED, max_retry: 0, argument: { status: 500, n } })));
  assert.equal(doomed.status, 201, JSON.stringify(doomed.body));
  await until('both doomed jobs to be dead', async () => {
    const dead = await api('GET', `/v1/dead?name=${DOOMED}`);
    return dead.body.length === 2;
  });
  // Paused from here on, so a retried job stays ready instead of failing straight back.
  assert.equal((await api('POST', `/v1/queues/${DOOMED}/pause`)).status, 200);
  return doomed.body.ids;
}

// A constraint of one job at a time per tenant, and three long jobs of one tenant on their own
// worker: one runs, two wait.
async function fillConstrained(api, master, workerUrl) {
  const created = await api('POST', '/v1/constraints', {
    name: CONSTRAINT, match: { name: LIMITED }, key: '/tenant', concurrency: 1,
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // Pushes are matched against the master's snapshot of the constraints, reloaded just after a
  // change: wait for it, so that no push races the reload.
  await until('the master to load the constraint', () => master.child.output.includes('constraints: 1 loaded'));
  const registered = await api('POST', '/v1/workers', {
    url: workerUrl, names: [LIMITED], concurrency: 4, secret: SLOW_SECRET,
  });
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
  const jobs = [0, 1, 2].map((n) => ({
    name: LIMITED, timeout: 300, argument: { tenant: 'acme', n, sleep_ms: 120_000 },
  }));
  assert.equal((await api('POST', '/v1/jobs', jobs)).status, 201);
  await until('one job of the tenant running and two waiting', async () => {
    const c = (await api('GET', `/v1/constraints/${CONSTRAINT}`)).body;
    return c.running === 1 && c.waiting === 2;
  });
}

// Echo jobs finishing over a few seconds, so the chart has something to draw.
async function pushEchoWaves(api, waves) {
  for (let w = 0; w < waves; w += 1) {
    const jobs = Array.from({ length: 20 + 15 * w }, () => ({ name: ECHO, argument: { sleep_ms: 20 } }));
    assert.equal((await api('POST', '/v1/jobs', jobs)).status, 201);
    await sleep(2200);
  }
}

const queueRow = (page, name) => page.locator(`#queues tr[data-key="${name}"]`);
const deadRow = (page, id) => page.locator(`#dead tr[data-key="${id}"]`);
const constraintRow = (page, name) => page.locator(`#constraints > tr[data-key="${name}"]`);
const cellText = async (row, column) => (await row.locator(':scope > td').nth(column).textContent()).trim();
const constraintNow = async (api) => (await api('GET', `/v1/constraints/${CONSTRAINT}`)).body;
const scheduleRow = (page, name) => page.locator(`#schedules > tr[data-key="${name}"]`);
const scheduleNow = async (api) => (await api('GET', `/v1/schedules/${SCHEDULE}`)).body;

async function run() {
  const redis = await startRedis();
  const master = await startMaster(redis.port);
  const worker = await startWorker();
  const slowWorker = await startWorker();
  const api = apiClient(master.base);
  const [retriedId, keptId] = await fill(api, worker.url);
  await fillConstrained(api, master, slowWorker.url);

  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const origin = new URL(master.base).origin;
    const outside = [];
    const pageErrors = [];
    const unauthorized = [];
    page.on('request', (req) => { if (new URL(req.url()).origin !== origin) outside.push(req.url()); });
    page.on('response', (res) => { if (res.status() === 401) unauthorized.push(res.url()); });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (msg) => {
      // Chromium logs every 401 answer as a failed resource load; that one is expected, and so
      // is /readyz's 503 while Redis is out of memory.
      const expected = /status of 401/.test(msg.text()) ||
        (/status of 503/.test(msg.text()) && msg.location().url.endsWith('/readyz'));
      if (msg.type() === 'error' && !expected) pageErrors.push(`${msg.text()} (${msg.location().url})`);
    });

    try {
      await check('the page asks for a token once, and keeps it for the tab', async () => {
        await page.goto(`${master.base}/`);
        await page.getByLabel('Token').waitFor({ state: 'visible', timeout: 10_000 });
        await page.getByLabel('Token').fill(ADMIN_TOKEN);
        await page.getByRole('button', { name: 'Use token' }).click();
        await page.locator('#token-form').waitFor({ state: 'hidden' });
        await queueRow(page, HELD).waitFor();
        assert.equal(await page.evaluate(() => sessionStorage.getItem('jqmaster.token')), ADMIN_TOKEN);
        const asked = unauthorized.length;
        assert.ok(asked >= 1, 'the master never answered 401, so auth is not on');
        await page.reload();
        await queueRow(page, HELD).waitFor();
        await sleep(2500); // one more refresh with the kept token
        assert.ok(await page.locator('#token-form').isHidden(), 'the form came back after a reload');
        assert.equal(unauthorized.length, asked, `401s after the token was entered: ${unauthorized.slice(asked)}`);
      });

      await check('the queue filled through the API shows its ready count, paused', async () => {
        const row = queueRow(page, HELD);
        await until('ready = 7 in the row', async () => (await row.locator('td').nth(0).textContent()) === '7');
        assert.match(await row.textContent(), /paused/);
        assert.equal(await row.getByRole('button').textContent(), 'Resume');
      });

      await check('Resume on the page resumes the queue, Pause pauses it (checked through the API)', async () => {
        await page.getByRole('button', { name: `Resume queue ${HELD}` }).click();
        await until('the API to say the queue is not paused', async () => (await api('GET', `/v1/queues/${HELD}`)).body.paused === false);
        await page.getByRole('button', { name: `Pause queue ${HELD}` }).click({ timeout: 10_000 });
        await until('the API to say the queue is paused', async () => (await api('GET', `/v1/queues/${HELD}`)).body.paused === true);
        await until('the page to show it paused', async () => /paused/.test(await queueRow(page, HELD).textContent()));
        // More jobs for the screenshot; the queue stays paused, so they stay ready.
        await api('POST', '/v1/jobs', Array.from({ length: 4 }, () => ({ name: HELD })));
      });

      // The row's cells after its name: match, key, limits, waiting, running, top keys, state.
      await check('a constraint made through the API is listed with its match, key, limits, numbers and top keys', async () => {
        const row = constraintRow(page, CONSTRAINT);
        await row.waitFor({ timeout: 10_000 });
        assert.equal(await cellText(row, 0), LIMITED);
        assert.equal(await cellText(row, 1), '/tenant');
        assert.equal(await cellText(row, 2), '1 at once · per key');
        await until('waiting 2 and running 1 in the row', async () => (await cellText(row, 3)) === '2' && (await cellText(row, 4)) === '1');
        assert.match(await cellText(row, 6), /active/);
        await row.getByText('1 key', { exact: true }).click();
        const acme = row.locator('table.keys tbody tr');
        await until('the top key acme with 2 waiting and 1 running', async () => (await acme.count()) === 1
          && (await acme.locator('th').textContent()) === 'acme'
          && (await acme.locator('td').nth(0).textContent()) === '2'
          && (await acme.locator('td').nth(1).textContent()) === '1');
        await sleep(2200); // a refresh keeps the top keys open
        assert.ok(await acme.isVisible(), 'the top keys closed on a refresh');
      });

      await check('Pause and Resume on the page patch the constraint (checked through the API)', async () => {
        await page.getByRole('button', { name: `Pause constraint ${CONSTRAINT}` }).click();
        await until('the API to say the constraint is paused', async () => (await constraintNow(api)).paused === true);
        await until('the page to show it paused', async () => /paused/.test(await cellText(constraintRow(page, CONSTRAINT), 6)));
        await page.getByRole('button', { name: `Resume constraint ${CONSTRAINT}` }).click({ timeout: 10_000 });
        await until('the API to say the constraint is not paused', async () => (await constraintNow(api)).paused === false);
        await until('the page to show it active', async () => /active/.test(await cellText(constraintRow(page, CONSTRAINT), 6)));
      });

      await check('the limits form edits the concurrency, and the held jobs start (checked through the API)', async () => {
        await page.getByRole('button', { name: `Edit limits of constraint ${CONSTRAINT}` }).click();
        const concurrency = page.getByLabel('Concurrency', { exact: true });
        assert.equal(await concurrency.inputValue(), '1');
        await concurrency.fill('3');
        await page.getByRole('button', { name: 'Save limits' }).click();
        await until('the API to say concurrency 3', async () => (await constraintNow(api)).concurrency === 3);
        const after = await constraintNow(api);
        assert.equal(after.rate, null);
        assert.equal(after.paused, false);
        await page.locator('#limits-form').waitFor({ state: 'hidden', timeout: 5000 }); // closed once saved
        const row = constraintRow(page, CONSTRAINT);
        await until('the row to show 3 at once, 0 waiting and 3 running', async () => (await cellText(row, 2)) === '3 at once · per key'
          && (await cellText(row, 3)) === '0' && (await cellText(row, 4)) === '3');
      });

      await check('the limits form sets and clears a rate, and refuses a limit without a period (checked through the API)', async () => {
        const edit = page.getByRole('button', { name: `Edit limits of constraint ${CONSTRAINT}` });
        await edit.click();
        await page.getByLabel('Limit', { exact: true }).fill('10');
        await page.getByRole('button', { name: 'Save limits' }).click();
        await until('the form to say what is missing', async () => /period/.test(await page.locator('#limits-error').textContent()));
        assert.equal((await constraintNow(api)).rate, null, 'a refused form sent a PATCH');
        await page.getByLabel('Period (s)', { exact: true }).fill('60');
        await page.getByLabel('Burst', { exact: true }).fill('2');
        await page.getByRole('button', { name: 'Save limits' }).click();
        await until('the API to show the rate', async () => (await constraintNow(api)).rate !== null);
        assert.deepEqual((await constraintNow(api)).rate, { limit: 10, period: 60, burst: 2 });
        assert.equal((await constraintNow(api)).concurrency, 3);
        await until('the row to show the rate', async () => (await cellText(constraintRow(page, CONSTRAINT), 2)) === '3 at once · 10 per 60 s, burst 2 · per key');
        await edit.click();
        assert.equal(await page.getByLabel('Period (s)', { exact: true }).inputValue(), '60');
        for (const label of ['Limit', 'Period (s)', 'Burst']) await page.getByLabel(label, { exact: true }).fill('');
        await page.getByRole('button', { name: 'Save limits' }).click();
        await until('the API to show no rate', async () => (await constraintNow(api)).rate === null);
      });

      await check('a dead job shows its last failure, and Retry makes it ready again (checked through the API)', async () => {
        const row = deadRow(page, retriedId);
        await row.waitFor({ timeout: 10_000 });
        assert.match(await row.textContent(), /500/, 'the last failure names the status');
        await page.getByRole('button', { name: `Retry dead job ${retriedId}` }).click();
        await until('the job to leave the dead set', async () => {
          const dead = await api('GET', `/v1/dead?name=${DOOMED}`);
          return !dead.body.some((d) => d.id === retriedId);
        });
        const job = await api('GET', `/v1/jobs/${retriedId}`);
        assert.equal(job.status, 200);
        assert.equal(job.body.state, 'queued');
        assert.equal(job.body.attempts, 0);
        await row.waitFor({ state: 'detached', timeout: 10_000 });
        assert.ok(await deadRow(page, keptId).isVisible(), 'the other dead job is still listed');
      });

      await check('the job browser lists a queue\'s jobs in order with their arguments, and dead jobs by state', async () => {
        await page.locator('#jobs-name').fill(HELD);
        await page.locator('#jobs-state').selectOption('queued');
        await page.getByRole('button', { name: 'Show', exact: true }).click();
        const rows = page.locator('#jobs tr');
        // The page shows what the API lists, in the same order: the queue's jobs, first pushed first.
        const listed = (await api('GET', `/v1/jobs?state=queued&name=${HELD}&limit=20`)).body.jobs;
        assert.ok(listed.length >= 7, `the API lists the ${HELD} jobs`);
        await until(`the ${listed.length} held jobs to be listed`, async () => (await rows.count()) === listed.length);
        for (const i of [0, listed.length - 1]) {
          const text = await rows.nth(i).textContent();
          assert.ok(text.includes(listed[i].id) && text.includes(JSON.stringify(listed[i].argument)),
            `row ${i} is ${listed[i].id} with its argument`);
        }
        assert.match(await rows.nth(0).textContent(), /\{"n":0\}/, 'the first pushed comes first');
        assert.ok(await page.getByRole('button', { name: 'Next page' }).isDisabled(), 'one page only');
        await page.locator('#jobs-name').fill(DOOMED);
        await page.locator('#jobs-state').selectOption('dead');
        await page.getByRole('button', { name: 'Show', exact: true }).click();
        await until('the kept dead job to be listed', async () =>
          (await rows.count()) === 1 && (await rows.nth(0).textContent()).includes(keptId));
        // A name the API would refuse is said in the panel; the page goes on refreshing.
        await page.locator('#jobs-name').fill('mail *');
        await page.getByRole('button', { name: 'Show', exact: true }).click();
        await until('the panel to say the name is not one', async () =>
          /not a job name/.test(await page.locator('#jobs-error').textContent()));
        const stamp = await page.locator('#status').textContent();
        await until('the next refresh', async () => (await page.locator('#status').textContent()) !== stamp);
        assert.match(await page.locator('#status').textContent(), /^Updated/);
        assert.match(await page.locator('#jobs-error').textContent(), /not a job name/, 'still said after a refresh');
        await page.locator('#jobs-name').fill(DOOMED);
        await page.getByRole('button', { name: 'Show', exact: true }).click();
        await until('the error to go with a valid name', async () =>
          (await page.locator('#jobs-error').textContent()) === '');
      });
      // The row's cells after its name: timetable, job, next run, last run, runs, skipped,
      // missed, state.
      await check('a schedule made through the API is listed with its timetable and next run', async () => {
        const created = await api('POST', '/v1/schedules', {
          name: SCHEDULE, cron: '30 2 * * *', timezone: 'Europe/Berlin', job: { name: 'dash.nightly' },
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        const row = scheduleRow(page, SCHEDULE);
        await row.waitFor({ timeout: 10_000 });
        assert.equal(await cellText(row, 0), '30 2 * * * · Europe/Berlin');
        assert.equal(await cellText(row, 1), 'dash.nightly');
        assert.ok((await cellText(row, 2)).startsWith(`${created.body.next_runs[0]} · in `));
        assert.equal(await row.locator(':scope > td').nth(2).getAttribute('title'), created.body.next_runs.join('\n'));
        assert.equal(await cellText(row, 3), 'never');
        assert.match(await cellText(row, 7), /active/);
      });

      await check('Run now on the page makes a job, Pause and Resume patch the schedule (checked through the API)', async () => {
        await page.getByRole('button', { name: `Run schedule ${SCHEDULE} now` }).click();
        await until('the API to count the run', async () => (await scheduleNow(api)).runs === 1);
        const { last_job_id: jobId } = await scheduleNow(api);
        assert.equal((await api('GET', `/v1/jobs/${jobId}`)).body.schedule, SCHEDULE);
        const row = scheduleRow(page, SCHEDULE);
        await until('the row to show the run and its job', async () => (await cellText(row, 4)) === '1'
          && (await cellText(row, 3)).endsWith(` · ${jobId}`));
        await page.getByRole('button', { name: `Pause schedule ${SCHEDULE}` }).click();
        await until('the API to say the schedule is paused', async () => (await scheduleNow(api)).paused === true);
        await until('the page to show it paused', async () => /paused/.test(await cellText(row, 7))
          && (await cellText(row, 2)) === 'paused');
        await page.getByRole('button', { name: `Resume schedule ${SCHEDULE}` }).click({ timeout: 10_000 });
        await until('the API to say the schedule ticks again', async () => (await scheduleNow(api)).next_run_at !== null);
        await until('the page to show it active', async () => /active/.test(await cellText(row, 7)));
      });

      await check('the job browser cancels a waiting job, and retries and deletes dead ones (checked through the API)', async () => {
        const jobs = page.locator('#jobs');
        const browse = async (state, name) => {
          await page.locator('#jobs-name').fill(name);
          await page.locator('#jobs-state').selectOption(state);
          await page.getByRole('button', { name: 'Show', exact: true }).click();
        };
        const confirmNext = () => page.once('dialog', (dialog) => dialog.accept());

        // A dead job is retried from its row: ready again, attempts reset (its queue is paused).
        await browse('dead', DOOMED);
        assert.equal(await jobs.getByRole('button', { name: `Cancel job ${keptId}` }).count(), 0, 'no Cancel for a dead job');
        await jobs.getByRole('button', { name: `Retry dead job ${keptId}` }).click({ timeout: 10_000 });
        await until('the retried job to be queued', async () => {
          const job = await api('GET', `/v1/jobs/${keptId}`);
          return job.body.state === 'queued' && job.body.attempts === 0;
        });
        // Queued and scheduled jobs have Cancel, and only that.
        const later = (await api('POST', '/v1/jobs', { name: HELD, argument: { later: true }, delay: 3600 })).body.id;
        await browse('scheduled', HELD);
        const cancel = jobs.getByRole('button', { name: `Cancel job ${later}` });
        await cancel.waitFor({ timeout: 10_000 });
        assert.equal(await jobs.getByRole('button', { name: `Retry dead job ${later}` }).count(), 0, 'no Retry for a waiting job');
        confirmNext();
        await cancel.click();
        await until('the cancelled job to be gone', async () => (await api('GET', `/v1/jobs/${later}`)).status === 404);
        await jobs.locator(`tr:has-text("${later}")`).waitFor({ state: 'detached', timeout: 10_000 });
        await browse('queued', DOOMED);
        await jobs.getByRole('button', { name: `Cancel job ${keptId}` }).waitFor({ timeout: 10_000 });
        // A job that dies is deleted from its row, after the question.
        const doomed = (await api('POST', '/v1/jobs', { name: ECHO, max_retry: 0, argument: { status: 500 } })).body.id;
        await until('the new job to be dead', async () => (await api('GET', `/v1/jobs/${doomed}`)).body.state === 'dead');
        await browse('dead', ECHO);
        const remove = jobs.getByRole('button', { name: `Delete dead job ${doomed}` });
        await remove.waitFor({ timeout: 10_000 });
        confirmNext();
        await remove.click();
        await until('the deleted job to leave the dead list', async () =>
          !(await api('GET', `/v1/dead?name=${ECHO}`)).body.some((d) => d.id === doomed));
        assert.equal((await api('GET', `/v1/jobs/${doomed}`)).status, 404);
      });

      await check('workers and the throughput chart are drawn from the API', async () => {
        await pushEchoWaves(api, 3);
        const workerRow = page.locator(`#workers tr:has-text("${worker.url}")`);
        await until('the worker row to show a failure', async () => /500/.test(await workerRow.textContent()));
        assert.match(await workerRow.textContent(), /healthy/);
        assert.equal(await cellText(workerRow, 2), 'unsigned');
        const slowRow = page.locator(`#workers tr:has-text("${slowWorker.url}")`);
        assert.equal(await cellText(slowRow, 2), 'signed');
        assert.ok(!(await page.content()).includes(SLOW_SECRET), 'the secret is not on the page');
        await until('a line in the chart', async () => (await page.locator('#chart polyline.done').count()) === 1);
        assert.match(await page.locator('#chart-now').textContent(), /jobs\/s/);
      });

      await check('while Redis is out of memory the status line says so, until it has room again', async () => {
        assert.equal(await redisCommand(redis.port, 'CONFIG', 'SET', 'maxmemory', '1'), '+OK');
        try {
          await until('the status to say Redis is out of memory',
            async () => /^Not ready: Redis is out of memory/.test(await page.locator('#status').textContent()));
          assert.ok(await page.locator('#status').evaluate((e) => e.classList.contains('error')));
          assert.ok(await queueRow(page, HELD).isVisible(), 'the queues are still shown');
        } finally {
          assert.equal(await redisCommand(redis.port, 'CONFIG', 'SET', 'maxmemory', '0'), '+OK');
        }
        await until('the status to clear', async () => /^Updated/.test(await page.locator('#status').textContent()));
      });

      await check('nothing is fetched from another origin, and the page logs no errors', async () => {
        assert.deepEqual(outside, []);
        assert.deepEqual(pageErrors, []);
      });

      await check(`a 1280x800 screenshot is saved to ${path.relative(ROOT, SCREENSHOT)}`, async () => {
        await sleep(2200); // one more refresh: the latest numbers and chart point
        await page.screenshot({ path: SCREENSHOT });
      });
    } finally {
      if (results.failed > 0) await page.screenshot({ path: FAILURE_SCREENSHOT }).catch(() => {});
    }
  } finally {
    await browser.close();
  }
}

async function main() {
  const timer = setTimeout(async () => {
    console.log(`FAIL the test took longer than ${OVERALL_TIMEOUT_MS / 1000} s`);
    await stopAll();
    process.exit(1);
  }, OVERALL_TIMEOUT_MS);
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, async () => { await stopAll(); process.exit(1); });
  }
  try {
    await run();
  } catch (e) {
    results.failed += 1;
    console.log(`FAIL setting up: ${e.stack || e}`);
  } finally {
    const logs = children.map((c) => `--- ${c.name} (pid ${c.pid}) ---\n${c.output}`).join('\n');
    await stopAll();
    clearTimeout(timer);
    if (results.failed > 0) console.log(logs);
    rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`${results.passed} passed, ${results.failed} failed`);
  process.exit(results.failed > 0 ? 1 : 0);
}

main();
