// The jqmaster dashboard. Every 2 s it reads the public /v1 API (JSON) and /readyz (whose
// message the status line shows while the master is not ready) and renders the totals,
// the queues, the constraints (each with its live state from GET /v1/constraints/{name}), the
// schedules (their next runs, last run and counters from GET /v1/schedules), the worker
// endpoints, the dead jobs, a page of the job browser (GET /v1/jobs) and a throughput chart.
// The chart has no history of its own on
// the server: it is computed here from successive GET /v1/stats answers (succeeded + failed
// deltas) kept in memory, so it starts empty when the page loads.
//
// With auth on, the first 401 shows a small form asking for a token; the token is kept in
// sessionStorage (this tab only) and sent as Authorization: Bearer. No framework, no build step,
// nothing fetched from another origin, no inline script or style (the page's CSP forbids them);
// data reaches the page only through textContent, never as HTML.
'use strict';

const REFRESH_MS = 2000;
const HISTORY_MS = 10 * 60 * 1000; // the chart's widest window
const MIN_SPAN_MS = 60 * 1000;      // its narrowest, while the page is young
const DEAD_LIMIT = 100;
// Constraints whose live state is read on each refresh (one GET each); later ones show '–'.
const CONSTRAINT_STATE_LIMIT = 50;
const TOKEN_KEY = 'jqmaster.token';
const SVG_NS = 'http://www.w3.org/2000/svg';

const $ = (id) => document.getElementById(id);
const numberFormat = new Intl.NumberFormat('en-US');
const timeFormat = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' });

// A 401 or 403: the page needs (another) token before it can go on.
class AuthNeeded extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || '',
  timer: null,
  inFlight: null,   // the refresh under way, if any
  again: false,     // refresh once more when it ends (an action happened meanwhile)
  waitingForToken: false,
  defaultHint: null, // the form's first title and hint, put back after a refused token
  samples: [],      // {t: ms since epoch, done: succeeded + failed, failed}
  constraints: new Map(), // name -> the constraint as last read, for the limits form
  // The job browser: what it shows, the cursor of the page shown (null: the first) and of the
  // next one.
  browse: { state: 'queued', name: '', cursor: null, next: null, problem: '' },
};

// --- the API -----------------------------------------------------------------------------------

// `payload`, when given, is sent as JSON.
async function api(method, path, payload) {
  const headers = { Accept: 'application/json' };
  if (state.token) headers.Authorization = `Bearer ${state.token}`;
  const init = { method, headers, cache: 'no-store' };
  if (payload !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(payload);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let body = null;
  if (text && (res.headers.get('Content-Type') || '').includes('json')) body = JSON.parse(text);
  if (res.status === 401 || res.status === 403) {
    throw new AuthNeeded(res.status, body && body.message ? body.message : `HTTP ${res.status}`);
  }
  if (!res.ok) {
    throw new Error(body && body.message ? body.message : `${method} ${path} answered HTTP ${res.status}`);
  }
  return body;
}

// /readyz's message while the master cannot take new jobs (Redis out of memory or away), else
// null. Never throws: the other reads say what they can either way.
async function notReady() {
  try {
    const res = await fetch('/readyz', { headers: { Accept: 'application/json' }, cache: 'no-store' });
    if (res.ok) return null;
    const body = await res.json();
    return body && body.message ? body.message : `/readyz answered HTTP ${res.status}`;
  } catch (e) {
    return null;
  }
}

// --- formatting --------------------------------------------------------------------------------

function count(n) {
  return typeof n === 'number' ? numberFormat.format(n) : '–';
}

function duration(seconds) {
  const s = Number(seconds) || 0;
  if (s === 0) return '0 s';
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} m ${Math.floor(s % 60)} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} m`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

function ago(iso) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso || '–';
  return `${duration(Math.max(0, (Date.now() - t) / 1000))} ago`;
}

function rate(perSecond) {
  return perSecond >= 10 || Number.isInteger(perSecond) ? perSecond.toFixed(0) : perSecond.toFixed(1);
}

// "−5 min", "−30 s": how long before now a point of the chart's x axis is.
function before(ms) {
  if (ms <= 0) return 'now';
  return ms >= 120000 ? `−${Math.round(ms / 60000)} min` : `−${Math.round(ms / 1000)} s`;
}

// The words of a dead job's last failure: the result object's message when there is one.
function failureText(result) {
  if (result === null || result === undefined) return 'no result kept';
  if (typeof result === 'object' && typeof result.message === 'string' && result.message) {
    return result.message;
  }
  return JSON.stringify(result).slice(0, 300);
}

// --- DOM helpers -------------------------------------------------------------------------------

function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) node.append(child);
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function setCell(row, index, text, title) {
  const cell = row.cells[index];
  if (cell.textContent !== text) cell.textContent = text;
  if (title !== undefined) cell.title = title;
}

// Updates `tbody` to one row per item in order, reusing rows by key, so rows (and the buttons
// in them) survive a refresh and a click is never lost to a re-render.
function syncRows(tbody, items, key, create, update) {
  const existing = new Map(Array.from(tbody.rows, (row) => [row.dataset.key, row]));
  let previous = null;
  for (const item of items) {
    const k = key(item);
    let row = existing.get(k);
    if (row) {
      existing.delete(k);
    } else {
      row = create(item);
      row.dataset.key = k;
    }
    update(row, item);
    const wanted = previous ? previous.nextSibling : tbody.firstChild;
    if (row !== wanted) tbody.insertBefore(row, wanted);
    previous = row;
  }
  for (const row of existing.values()) row.remove();
}

function showEmpty(id, empty) {
  $(id).hidden = !empty;
}

function badge(text, kind) {
  return el('span', { className: `badge ${kind}`, textContent: text });
}

// A row that can be paused: its next-to-last cell says whether it is, and the first button of
// its last cell offers the other (labelled "Pause queue x", "Resume constraint y").
function showPaused(row, paused, what) {
  if (row.dataset.paused === String(paused)) return;
  row.dataset.paused = String(paused);
  row.classList.toggle('paused', paused);
  const cells = row.cells;
  cells[cells.length - 2].replaceChildren(paused ? badge('paused', 'warn') : badge('active', 'ok'));
  const button = cells[cells.length - 1].firstChild;
  button.textContent = paused ? 'Resume' : 'Pause';
  button.setAttribute('aria-label', `${button.textContent} ${what}`);
}

// --- actions -----------------------------------------------------------------------------------

async function act(button, method, path, payload) {
  button.disabled = true;
  try {
    await api(method, path, payload);
  } catch (e) {
    if (e instanceof AuthNeeded) {
      askForToken(e);
      return;
    }
    setStatus(`${button.textContent} failed: ${e.message}`, true);
  } finally {
    button.disabled = false;
  }
  refreshSoon();
}

// --- the sections ------------------------------------------------------------------------------

// GET /v1/stats: counters since the data store was created, then what is there now.
const COUNTERS = [['pushed', 'Pushed'], ['succeeded', 'Succeeded'], ['failed', 'Failed'],
  ['retried', 'Retried'], ['dead', 'Died']];
const GAUGES = [['ready', 'Ready'], ['scheduled', 'Scheduled'], ['running', 'Running'],
  ['workers', 'Workers']];

function total(label, value, title, className = '') {
  return el('div', { title, className }, [el('dt', { textContent: label }), el('dd', { textContent: value })]);
}

function renderTotals(stats) {
  const since = 'since the data store was created';
  $('totals').replaceChildren(
    ...COUNTERS.map(([key, label]) => total(label, count(stats[key]), `${label} ${since}`)),
    ...GAUGES.map(([key, label], i) => total(label, count(stats[key]), `${label} now`, i === 0 ? 'now' : '')),
    total('Uptime', duration(stats.uptime_seconds), 'how long this master process has run'),
  );
}

function createQueueRow(queue) {
  const button = el('button', { type: 'button' });
  const row = el('tr', {}, [
    el('th', { scope: 'row' }), el('td', { className: 'num' }), el('td', { className: 'num' }),
    el('td', { className: 'num' }), el('td', { className: 'num' }), el('td', { className: 'num' }),
    el('td'), el('td', { className: 'actions' }, [button]),
  ]);
  button.addEventListener('click', () => {
    const verb = row.dataset.paused === 'true' ? 'resume' : 'pause';
    act(button, 'POST', `/v1/queues/${encodeURIComponent(queue.name)}/${verb}`);
  });
  return row;
}

function updateQueueRow(row, q) {
  setCell(row, 0, q.name);
  setCell(row, 1, count(q.ready));
  setCell(row, 2, count(q.scheduled));
  setCell(row, 3, count(q.running));
  setCell(row, 4, count(q.dead));
  setCell(row, 5, duration(q.lag_seconds), 'age of the oldest ready job');
  showPaused(row, Boolean(q.paused), `queue ${q.name}`);
}

function renderQueues(queues) {
  syncRows($('queues'), queues, (q) => q.name, createQueueRow, updateQueueRow);
  showEmpty('queues-empty', queues.length === 0);
}

function createWorkerRow() {
  return el('tr', {}, [
    el('th', { scope: 'row', className: 'url' }), el('td', { className: 'names' }), el('td'),
    el('td'), el('td', { className: 'num' }), el('td', { className: 'num' }),
    el('td', { className: 'num' }), el('td', { className: 'num' }), el('td', { className: 'error-text' }),
  ]);
}

function updateWorkerRow(row, w) {
  // An https worker registered with its own CAs says which file its certificate is checked with.
  setCell(row, 0, w.url, w.ca_file ? `worker ${w.id}, CAs from ${w.ca_file}` : `worker ${w.id}`);
  const names = (w.names || []).join(', ');
  setCell(row, 1, names, names);
  // Unreachable outranks busy (a 429/503 with Retry-After holds it back until busy_until).
  const health = !w.healthy ? 'unreachable' : w.busy_until ? `busy until ${w.busy_until}` : 'healthy';
  if (row.dataset.health !== health) {
    row.dataset.health = health;
    const kind = health === 'healthy' ? 'ok' : health === 'unreachable' ? 'bad' : 'warn';
    const shown = w.busy_until && w.healthy
      ? badge(`busy until ${new Date(w.busy_until).toLocaleTimeString()}`, kind)
      : badge(health, kind);
    row.cells[2].replaceChildren(shown);
  }
  // Whether, never with what: the API does not show the secret.
  setCell(row, 3, w.signed ? 'signed' : 'unsigned',
    w.signed ? 'Every job sent to it carries X-Jq-Timestamp and X-Jq-Signature' : 'Registered without a secret');
  setCell(row, 4, `${count(w.inflight)} / ${count(w.concurrency)}`);
  setCell(row, 5, count(w.dispatched));
  setCell(row, 6, count(w.succeeded));
  setCell(row, 7, count(w.failed));
  setCell(row, 8, w.last_error || '–', w.last_error || '');
}

function renderWorkers(workers) {
  syncRows($('workers'), workers, (w) => w.id, createWorkerRow, updateWorkerRow);
  showEmpty('workers-empty', workers.length === 0);
}

// A button that does one thing to one job; `confirmation` asks first (for what cannot be undone).
function jobButton(label, ariaLabel, method, path, confirmation, className = '') {
  const button = el('button', { type: 'button', textContent: label, className });
  button.setAttribute('aria-label', ariaLabel);
  button.addEventListener('click', () => {
    if (!confirmation || window.confirm(confirmation)) act(button, method, path);
  });
  return button;
}

// Retry and Delete for a dead job (the dead list and the job browser).
function deadActions(id) {
  const path = `/v1/dead/${encodeURIComponent(id)}`;
  return [
    jobButton('Retry', `Retry dead job ${id}`, 'POST', `${path}/retry`),
    ' ',
    jobButton('Delete', `Delete dead job ${id}`, 'DELETE', path, `Delete dead job ${id} for good?`, 'danger'),
  ];
}

function createDeadRow(job) {
  return el('tr', {}, [
    el('th', { scope: 'row' }, [el('code')]), el('td'), el('td', { className: 'num' }), el('td'),
    el('td', { className: 'error-text' }), el('td', { className: 'actions' }, deadActions(job.id)),
  ]);
}

function updateDeadRow(row, job) {
  const code = row.cells[0].firstChild;
  if (code.textContent !== job.id) code.textContent = job.id;
  setCell(row, 1, job.name);
  setCell(row, 2, count(job.attempts));
  setCell(row, 3, ago(job.failed_at), job.failed_at);
  const text = failureText(job.result);
  setCell(row, 4, text, text);
}

function renderDead(dead, total) {
  syncRows($('dead'), dead, (d) => d.id, createDeadRow, updateDeadRow);
  showEmpty('dead-empty', dead.length === 0);
  $('dead-count').textContent = dead.length < total ? `newest ${dead.length} of ${count(total)}` : '';
}

// --- the job browser ---------------------------------------------------------------------------

const JOBS_PAGE = 20;

// The API's rule for a job name: asked before a request that would be refused.
const JOB_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$/;

// A page of jobs, or {error} when it cannot be read: the other panels refresh all the same.
async function loadJobs() {
  const b = state.browse;
  const query = new URLSearchParams({ state: b.state, limit: String(JOBS_PAGE) });
  if (b.name) query.set('name', b.name);
  if (b.cursor) query.set('cursor', b.cursor);
  try {
    return await api('GET', `/v1/jobs?${query}`);
  } catch (e) {
    if (e instanceof AuthNeeded) throw e;
    return { error: e.message };
  }
}

// What the job waits for or when it happened, by state.
function whenText(job) {
  if (job.state === 'scheduled' && job.ready_at) {
    const due = (Date.parse(job.ready_at) - Date.now()) / 1000;
    return [due > 0 ? `due in ${duration(due)}` : 'due now', job.ready_at];
  }
  if (job.blocked_by) return [`held by ${job.blocked_by}`, job.enqueued_at];
  if (job.last_error) return [job.last_error, job.last_error];
  return [`pushed ${ago(job.enqueued_at)}`, job.enqueued_at];
}

function createJobRow() {
  return el('tr', {}, [
    el('th', { scope: 'row' }, [el('code')]), el('td'), el('td', { className: 'num' }),
    el('td', { className: 'num' }), el('td'), el('td', { className: 'argument' }, [el('code')]),
    el('td', { className: 'actions' }),
  ]);
}

// What can be done to a listed job: cancel one that waits (DELETE /v1/jobs/{id}), retry or
// delete a dead one; nothing to a running one.
function jobActions(job) {
  if (job.state === 'queued' || job.state === 'scheduled') {
    return [jobButton('Cancel', `Cancel job ${job.id}`, 'DELETE', `/v1/jobs/${encodeURIComponent(job.id)}`,
      `Cancel job ${job.id}? It will not run.`, 'danger')];
  }
  return job.state === 'dead' ? deadActions(job.id) : [];
}

function updateJobRow(row, job) {
  const code = row.cells[0].firstChild;
  if (code.textContent !== job.id) code.textContent = job.id;
  setCell(row, 1, job.name);
  setCell(row, 2, String(job.priority));
  setCell(row, 3, count(job.attempts));
  const [text, title] = whenText(job);
  setCell(row, 4, text, title);
  const argument = JSON.stringify(job.argument) ?? 'null';
  const cell = row.cells[5];
  if (cell.firstChild.textContent !== argument) cell.firstChild.textContent = argument;
  cell.title = argument;
  // The buttons depend on the state: rebuilt only when it changes, so a click is never lost.
  if (row.dataset.actions !== job.state) {
    row.dataset.actions = job.state;
    row.cells[6].replaceChildren(...jobActions(job));
  }
}

function renderJobs(page) {
  const b = state.browse;
  $('jobs-error').textContent = b.problem || (page.error ? `Cannot list the jobs: ${page.error}` : '');
  const jobs = page.jobs || [];
  b.next = page.next_cursor;
  syncRows($('jobs'), jobs, (j) => j.id, createJobRow, updateJobRow);
  showEmpty('jobs-empty', jobs.length === 0 && !page.error);
  // A page that stopped at its scan budget can be empty and still have more after it.
  $('jobs-empty').textContent = b.next
    ? 'No jobs on this page: this state has many entries of other names; Next goes on.'
    : 'No jobs in this state.';
  $('jobs-next').disabled = !b.next;
  $('jobs-first').disabled = !b.cursor;
  $('jobs-where').textContent = `${b.state}${b.name ? ` · ${b.name}` : ''}${b.cursor ? ' · a later page' : ''}`;
}

function browseFrom(cursor) {
  state.browse.cursor = cursor;
  refreshSoon();
}

function showJobs(event) {
  event.preventDefault();
  const name = $('jobs-name').value.trim();
  if (name && !JOB_NAME.test(name)) {
    state.browse.problem = `"${name}" is not a job name: 1-128 of A-Z a-z 0-9 _ . : -, not starting with . : or -`;
    $('jobs-error').textContent = state.browse.problem;
    return;
  }
  state.browse.problem = '';
  state.browse.state = $('jobs-state').value;
  state.browse.name = name;
  browseFrom(null);
}

// --- constraints -------------------------------------------------------------------------------

// GET /v1/constraints, then the live state of each (up to CONSTRAINT_STATE_LIMIT): the object
// with {waiting, running, keys, top_keys}, or the bare definition when its state could not be
// read (it was deleted in between, say).
async function loadConstraints() {
  const list = await api('GET', '/v1/constraints');
  return Promise.all(list.map(async (c, i) => {
    if (i >= CONSTRAINT_STATE_LIMIT) return c;
    try {
      return await api('GET', constraintPath(c.name));
    } catch (e) {
      if (e instanceof AuthNeeded) throw e;
      return c;
    }
  }));
}

function constraintPath(name) {
  return `/v1/constraints/${encodeURIComponent(name)}`;
}

// "mail.* · /kind = "newsletter" · /region in ["eu","us"] · /tenant exists"
function matchText(match) {
  const parts = [match.name];
  for (const c of match.argument || []) {
    if ('equals' in c) parts.push(`${c.path} = ${JSON.stringify(c.equals)}`);
    else if ('in' in c) parts.push(`${c.path} in ${JSON.stringify(c.in)}`);
    else parts.push(`${c.path} ${c.exists ? 'exists' : 'absent'}`);
  }
  return parts.join(' · ');
}

// "5 at once · 100 per 60 s, burst 10 · per key"
function limitsText(c) {
  const parts = [];
  if (c.concurrency) parts.push(`${count(c.concurrency)} at once`);
  if (c.rate) {
    const burst = c.rate.burst ? `, burst ${count(c.rate.burst)}` : '';
    parts.push(`${count(c.rate.limit)} per ${c.rate.period} s${burst}`);
  }
  if (parts.length === 0) return c.paused ? 'paused only' : 'none';
  if (c.key) parts.push('per key');
  return parts.join(' · ');
}

function nextStart(iso) {
  if (!iso) return 'now';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : timeFormat.format(t);
}

// The top keys as a small table inside a <details>, kept (and kept open) across refreshes.
function renderTopKeys(cell, c) {
  const details = cell.firstChild;
  const keys = c.top_keys;
  details.hidden = !keys || keys.length === 0;
  cell.lastChild.hidden = !details.hidden;
  if (details.hidden) return;
  const shown = keys.length < c.keys
    ? `top ${keys.length} of ${count(c.keys)} keys`
    : `${count(c.keys)} key${c.keys === 1 ? '' : 's'}`;
  const summary = details.firstChild;
  if (summary.textContent !== shown) summary.textContent = shown;
  const signature = JSON.stringify(keys);
  if (details.dataset.signature === signature) return;
  details.dataset.signature = signature;
  const rows = keys.map((k) => el('tr', {}, [
    el('th', { scope: 'row', textContent: k.key === '' ? '(no key)' : k.key }),
    el('td', { className: 'num', textContent: count(k.waiting) }),
    el('td', { className: 'num', textContent: count(k.running) }),
    el('td', { textContent: nextStart(k.next_start_at), title: k.next_start_at || 'a start is allowed now' }),
  ]));
  details.lastChild.tBodies[0].replaceChildren(...rows);
}

function topKeysCell() {
  const head = el('thead', {}, [el('tr', {}, [
    el('th', { scope: 'col', textContent: 'Key' }), el('th', { scope: 'col', className: 'num', textContent: 'Waiting' }),
    el('th', { scope: 'col', className: 'num', textContent: 'Running' }), el('th', { scope: 'col', textContent: 'Next start' }),
  ])]);
  const details = el('details', {}, [el('summary'), el('table', { className: 'keys' }, [head, el('tbody')])]);
  return el('td', { className: 'top-keys' }, [details, el('span', { textContent: '–' })]);
}

function createConstraintRow(c) {
  const toggle = el('button', { type: 'button' });
  const edit = el('button', { type: 'button', textContent: 'Edit limits', className: 'secondary' });
  edit.setAttribute('aria-label', `Edit limits of constraint ${c.name}`);
  const row = el('tr', {}, [
    el('th', { scope: 'row' }), el('td', { className: 'match' }), el('td'), el('td'),
    el('td', { className: 'num' }), el('td', { className: 'num' }), topKeysCell(), el('td'),
    el('td', { className: 'actions' }, [toggle, ' ', edit]),
  ]);
  toggle.addEventListener('click', () => {
    act(toggle, 'PATCH', constraintPath(c.name), { paused: row.dataset.paused !== 'true' });
  });
  edit.addEventListener('click', () => openLimitsForm(state.constraints.get(c.name) || c));
  return row;
}

function updateConstraintRow(row, c) {
  setCell(row, 0, c.name);
  const match = matchText(c.match);
  setCell(row, 1, match, match);
  setCell(row, 2, c.key || '–', c.key ? 'one limit per distinct value at this JSON Pointer' : 'one limit for all it matches');
  setCell(row, 3, limitsText(c));
  const live = 'waiting' in c;
  const unread = 'live state not read';
  setCell(row, 4, live ? count(c.waiting) : '–', live ? 'jobs it holds back now' : unread);
  setCell(row, 5, live ? count(c.running) : '–', live ? 'attempts running that count against it' : unread);
  renderTopKeys(row.cells[6], c);
  showPaused(row, Boolean(c.paused), `constraint ${c.name}`);
}

function renderConstraints(constraints) {
  state.constraints = new Map(constraints.map((c) => [c.name, c]));
  syncRows($('constraints'), constraints, (c) => c.name, createConstraintRow, updateConstraintRow);
  showEmpty('constraints-empty', constraints.length === 0);
}

// The limits form: one for the panel, filled from the constraint whose Edit was clicked. Saving
// sends PATCH {concurrency, rate}: both as the form shows them, null where a field is empty.
function openLimitsForm(c) {
  const form = $('limits-form');
  form.dataset.name = c.name;
  $('limits-title').textContent = `Limits of ${c.name}`;
  $('limits-concurrency').value = c.concurrency ?? '';
  $('limits-rate-limit').value = c.rate ? c.rate.limit : '';
  $('limits-rate-period').value = c.rate ? c.rate.period : '';
  $('limits-rate-burst').value = c.rate && c.rate.burst ? c.rate.burst : '';
  $('limits-error').textContent = '';
  form.hidden = false;
  $('limits-concurrency').focus();
}

function closeLimitsForm() {
  $('limits-form').hidden = true;
}

function numberField(id) {
  const text = $(id).value.trim();
  return text === '' ? null : Number(text);
}

// The PATCH body, or a string saying what is missing.
function limitsBody() {
  const limit = numberField('limits-rate-limit');
  const period = numberField('limits-rate-period');
  const burst = numberField('limits-rate-burst');
  if ((limit === null) !== (period === null)) return 'Give the rate\'s limit and its period, or neither.';
  if (limit === null && burst !== null) return 'A burst needs a rate: give its limit and period.';
  const rate = limit === null ? null : { limit, period, burst: burst ?? 0 };
  return { concurrency: numberField('limits-concurrency'), rate };
}

async function saveLimits(event) {
  event.preventDefault();
  const form = $('limits-form');
  const body = limitsBody();
  if (typeof body === 'string') {
    $('limits-error').textContent = body;
    return;
  }
  const submit = form.querySelector('button[type="submit"]');
  submit.disabled = true;
  try {
    await api('PATCH', constraintPath(form.dataset.name), body);
    closeLimitsForm();
  } catch (e) {
    if (e instanceof AuthNeeded) {
      askForToken(e);
      return;
    }
    $('limits-error').textContent = `Not saved: ${e.message}`;
  } finally {
    submit.disabled = false;
  }
  refreshSoon();
}

// --- schedules ---------------------------------------------------------------------------------

function schedulePath(name) {
  return `/v1/schedules/${encodeURIComponent(name)}`;
}

// "30 2 * * * · Europe/Berlin", "every 300 s · from 2026-12-01T00:00:00Z"
function timetableText(s) {
  const parts = [s.cron !== null ? s.cron : `every ${count(s.every)} s`];
  if (s.cron !== null) parts.push(s.timezone);
  if (s.start_at) parts.push(`from ${s.start_at}`);
  if (s.end_at) parts.push(`until ${s.end_at}`);
  return parts.join(' · ');
}

// The next tick as the schedule's zone reads it, and how soon; the title lists the next five.
function nextRunText(s) {
  if (!s.next_run_at) return [s.paused ? 'paused' : 'none: it has ended', ''];
  const due = (Date.parse(s.next_run_at) - Date.now()) / 1000;
  return [`${s.next_run_at} · ${due > 0 ? `in ${duration(due)}` : 'now'}`, s.next_runs.join('\n')];
}

function createScheduleRow(s) {
  const toggle = el('button', { type: 'button' });
  const run = el('button', { type: 'button', textContent: 'Run now', className: 'secondary' });
  run.setAttribute('aria-label', `Run schedule ${s.name} now`);
  const row = el('tr', {}, [
    el('th', { scope: 'row' }), el('td', { className: 'timetable' }), el('td'), el('td'),
    el('td'), el('td', { className: 'num' }), el('td', { className: 'num' }),
    el('td', { className: 'num' }), el('td'), el('td', { className: 'actions' }, [toggle, ' ', run]),
  ]);
  toggle.addEventListener('click', () => {
    act(toggle, 'PATCH', schedulePath(s.name), { paused: row.dataset.paused !== 'true' });
  });
  run.addEventListener('click', () => act(run, 'POST', `${schedulePath(s.name)}/run`));
  return row;
}

function updateScheduleRow(row, s) {
  setCell(row, 0, s.name);
  const timetable = timetableText(s);
  setCell(row, 1, timetable, timetable);
  setCell(row, 2, s.job.name, JSON.stringify(s.job));
  const [next, upcoming] = nextRunText(s);
  setCell(row, 3, next, upcoming);
  setCell(row, 4, s.last_run_at ? `${ago(s.last_run_at)} · ${s.last_job_id}` : 'never',
    s.last_run_at || 'no job made yet');
  setCell(row, 5, count(s.runs), 'jobs made: ticks and runs now');
  setCell(row, 6, count(s.skipped + s.duplicates),
    `${count(s.skipped)} while the previous job ran (overlap: skip), ${count(s.duplicates)} duplicates of a held unique_key`);
  setCell(row, 7, count(s.missed_count), `ticks no master could make in time (missed: ${s.missed})`);
  showPaused(row, Boolean(s.paused), `schedule ${s.name}`);
}

function renderSchedules(schedules) {
  syncRows($('schedules'), schedules, (s) => s.name, createScheduleRow, updateScheduleRow);
  showEmpty('schedules-empty', schedules.length === 0);
}

// --- throughput ----------------------------------------------------------------------------------

// A job is done once it succeeded or went dead; `failed` counts attempts, retried ones too.
function record(stats, now) {
  state.samples.push({ t: now, done: (stats.succeeded || 0) + (stats.dead || 0), failed: stats.dead || 0 });
  while (state.samples.length > 2 && state.samples[1].t < now - HISTORY_MS) state.samples.shift();
}

// Rates between successive samples; a counter that went down (a new data store) starts afresh.
function rates() {
  const out = [];
  for (let i = 1; i < state.samples.length; i += 1) {
    const a = state.samples[i - 1];
    const b = state.samples[i];
    const seconds = (b.t - a.t) / 1000;
    if (seconds <= 0 || b.done < a.done || b.failed < a.failed) continue;
    out.push({ t: b.t, done: (b.done - a.done) / seconds, failed: (b.failed - a.failed) / seconds });
  }
  return out;
}

function niceCeiling(value) {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 5, 10].find((m) => m * power >= value);
  return step * power;
}

function renderChart(now) {
  const W = 640;
  const H = 170;
  const left = 40;
  const right = 8;
  const top = 8;
  const bottom = 22;
  const points = rates().filter((p) => p.t >= now - HISTORY_MS);
  const peak = niceCeiling(Math.max(0, ...points.map((p) => p.done)));
  // The window grows with the page's age up to HISTORY_MS, so a young page's points spread out.
  const span = Math.min(HISTORY_MS, Math.max(MIN_SPAN_MS, now - state.samples[0].t));
  const x = (t) => left + ((t - (now - span)) / span) * (W - left - right);
  const y = (v) => top + (1 - v / peak) * (H - top - bottom);
  const latest = points[points.length - 1];
  const summary = latest
    ? `now ${rate(latest.done)} jobs/s completed, ${rate(latest.failed)}/s failed for good (dead); peak ${rate(Math.max(...points.map((p) => p.done)))}/s`
    : 'collecting: the first rate appears after two refreshes';

  const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Throughput chart: ${summary}` });
  for (const v of [0, peak / 2, peak]) {
    chart.append(svg('line', { x1: left, x2: W - right, y1: y(v), y2: y(v), class: 'grid' }));
    chart.append(svg('text', { x: left - 6, y: y(v) + 4, class: 'axis', 'text-anchor': 'end' }, rate(v)));
  }
  for (const [ago, anchor] of [[span, 'start'], [span / 2, 'middle'], [0, 'end']]) {
    chart.append(svg('text', { x: x(now - ago), y: H - 6, class: 'axis', 'text-anchor': anchor }, before(ago)));
  }
  for (const key of ['done', 'failed']) {
    if (points.length === 0) break;
    const coords = points.map((p) => `${x(p.t).toFixed(1)},${y(p[key]).toFixed(1)}`);
    if (points.length === 1) coords.unshift(`${x(points[0].t - REFRESH_MS).toFixed(1)},${y(points[0][key]).toFixed(1)}`);
    chart.append(svg('polyline', { points: coords.join(' '), class: `line ${key}` }));
  }
  $('chart').replaceChildren(chart);
  $('chart-now').textContent = summary;
}

// --- refreshing ----------------------------------------------------------------------------------

function setStatus(text, isError = false) {
  const status = $('status');
  status.textContent = text;
  status.classList.toggle('error', isError);
}

async function refreshOnce() {
  clearTimeout(state.timer);
  try {
    const [stats, queues, workers, dead, constraints, unready, jobs, schedules] = await Promise.all([
      api('GET', '/v1/stats'), api('GET', '/v1/queues'), api('GET', '/v1/workers'),
      api('GET', `/v1/dead?limit=${DEAD_LIMIT}`), loadConstraints(), notReady(), loadJobs(),
      api('GET', '/v1/schedules'),
    ]);
    const now = Date.now();
    record(stats, now);
    renderTotals(stats);
    renderQueues(queues);
    renderConstraints(constraints);
    renderSchedules(schedules);
    renderWorkers(workers);
    renderDead(dead, queues.reduce((sum, q) => sum + (q.dead || 0), 0));
    renderJobs(jobs);
    renderChart(now);
    const updated = `Updated ${timeFormat.format(now)} · refreshing every ${REFRESH_MS / 1000} s`;
    if (unready) {
      setStatus(`Not ready: ${unready}. ${updated}`, true);
    } else {
      setStatus(updated);
    }
  } catch (e) {
    if (e instanceof AuthNeeded) {
      askForToken(e);
      return;
    }
    setStatus(`Cannot read the master: ${e.message}. Trying again…`, true);
  }
  state.timer = setTimeout(refreshSoon, REFRESH_MS);
}

function refreshSoon() {
  if (state.waitingForToken) return;
  if (state.inFlight) {
    state.again = true;
    return;
  }
  state.inFlight = refreshOnce().finally(() => {
    state.inFlight = null;
    if (state.again) {
      state.again = false;
      refreshSoon();
    }
  });
}

// --- the token -----------------------------------------------------------------------------------

function askForToken(error) {
  clearTimeout(state.timer);
  state.waitingForToken = true;
  const form = $('token-form');
  if (!state.defaultHint) {
    state.defaultHint = [$('token-title').textContent, Array.from($('token-hint').childNodes)];
  }
  if (error.status === 403) {
    $('token-title').textContent = 'This token cannot do that';
    $('token-hint').textContent = `The master says: ${error.message}.`;
  } else if (state.token) {
    $('token-title').textContent = 'The master refused this token';
    $('token-hint').textContent = 'Enter an admin token from the master\'s auth.tokens.';
  } else {
    $('token-title').textContent = state.defaultHint[0];
    $('token-hint').replaceChildren(...state.defaultHint[1].map((node) => node.cloneNode(true)));
  }
  setStatus('Waiting for a token', true);
  form.hidden = false;
  $('token-input').focus();
}

function useToken(event) {
  event.preventDefault();
  const input = $('token-input');
  state.token = input.value.trim();
  input.value = '';
  if (!state.token) return;
  sessionStorage.setItem(TOKEN_KEY, state.token);
  $('token-form').hidden = true;
  $('forget-token').hidden = false;
  state.waitingForToken = false;
  setStatus('Loading…');
  refreshSoon();
}

function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
  state.token = '';
  $('forget-token').hidden = true;
  refreshSoon();
}

function start() {
  $('token-form').addEventListener('submit', useToken);
  $('forget-token').addEventListener('click', forgetToken);
  $('limits-form').addEventListener('submit', saveLimits);
  $('limits-cancel').addEventListener('click', closeLimitsForm);
  $('jobs-form').addEventListener('submit', showJobs);
  $('jobs-next').addEventListener('click', () => browseFrom(state.browse.next));
  $('jobs-first').addEventListener('click', () => browseFrom(null));
  $('forget-token').hidden = !state.token;
  refreshSoon();
}

start();
