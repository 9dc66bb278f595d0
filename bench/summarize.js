#!/usr/bin/env node
// Medians and ratios of a bench/compare.sh run: node bench/summarize.js RESULTS.jsonl
// Each input line is {system, test, result} where result is a jqbench or bench.js JSON line;
// systems are jqmaster-prio-off|on, bullmq-prio-off|on, baseline-prio-off|on (BASELINE_BIN),
// jqmaster-syscalls (syscalls per job) and nginx (the HTTP floor: test http_floor). Prints
// Markdown tables: per row and priority setting the median over the repetitions for each
// system, the ratio jqmaster/BullMQ, the target (issue 6 for the classic rows, issue 14 for the
// others) with whether the medians meet it, and the CPU per job of every process, median per
// process; then the kernel's share of each process's CPU,
// the floor of one HTTP exchange (nginx) when compare.sh measured it, Redis's commands per job
// and the master's syscalls per job where they were measured.
'use strict';

const fs = require('fs');

// CPU µs per job of one process, from a result line's cpu_s_by_process.
const cpuOf = (label) => (r) => {
  const s = (r.cpu_s_by_process || {})[label];
  return typeof s === 'number' && r.jobs > 0 ? (s * 1e6) / r.jobs : null;
};
const field = (name) => (r) => r[name];

const BOTH = ['off', 'on'];
const OFF = ['off'];

// label, [jq test, value], [BullMQ test, value], higher is better?, target, priorities.
// target: {ratio} (jqmaster / BullMQ) or {max} (jqmaster's own figure).
const ROWS = [
  { group: 'Issue 14 workloads' },
  ['a. single JSON pushes, 50 connections vs add, 50 in flight (jobs/s)', ['push_single_json50', field('jobs_per_s')], ['push_single_json50', field('jobs_per_s')], true, { ratio: 1.5 }, OFF],
  ['a. CPU per job, all processes (µs)', ['push_single_json50', field('cpu_us_per_job')], ['push_single_json50', field('cpu_us_per_job')], false, { ratio: 0.5 }, OFF],
  ['a. the same pushes sent by wrk instead of jqbench (jobs/s)', ['push_single_json50_wrk', field('jobs_per_s')], ['push_single_json50', field('jobs_per_s')], true, { ratio: 1.5 }, OFF],
  ['a. CPU per job with wrk, all processes (µs)', ['push_single_json50_wrk', field('cpu_us_per_job')], ['push_single_json50', field('cpu_us_per_job')], false, { ratio: 0.5 }, OFF],
  ['b. e2e, single JSON pushes, jqworker answering JSON vs Worker (jobs/s)', ['e2e_single_jqworker-json', field('jobs_per_s')], ['e2e_single_worker', field('jobs_per_s')], true, { ratio: 2 }, OFF],
  ['b. e2e, jqworker answering MessagePack (jobs/s)', ['e2e_single_jqworker-msgpack', field('jobs_per_s')], ['e2e_single_worker', field('jobs_per_s')], true, { ratio: 2 }, OFF],
  ['b. e2e, Node worker answering JSON (jobs/s)', ['e2e_single_node-json', field('jobs_per_s')], ['e2e_single_worker', field('jobs_per_s')], true, { ratio: 2 }, OFF],
  ['b. e2e, Node worker answering MessagePack (jobs/s)', ['e2e_single_node-msgpack', field('jobs_per_s')], ['e2e_single_worker', field('jobs_per_s')], true, { ratio: 2 }, OFF],
  ['b. the same pushes sent by wrk, jqworker answering JSON (jobs/s)', ['e2e_single_jqworker-json_wrk', field('jobs_per_s')], ['e2e_single_worker', field('jobs_per_s')], true, { ratio: 2 }, OFF],
  ['b. the same pushes sent by wrk, jqworker answering MessagePack (jobs/s)', ['e2e_single_jqworker-msgpack_wrk', field('jobs_per_s')], ['e2e_single_worker', field('jobs_per_s')], true, { ratio: 2 }, OFF],
  ['b. CPU per job, e2e with jqworker JSON, all processes (µs)', ['e2e_single_jqworker-json', field('cpu_us_per_job')], ['e2e_single_worker', field('cpu_us_per_job')], false, null, OFF],
  ['b. CPU per job, the same with wrk, all processes (µs)', ['e2e_single_jqworker-json_wrk', field('cpu_us_per_job')], ['e2e_single_worker', field('cpu_us_per_job')], false, null, OFF],
  ['c. drain, external worker, concurrency 50 (jobs/s)', ['drain_external_c50', field('jobs_per_s')], ['drain_external_c50', field('jobs_per_s')], true, { ratio: 1.5 }, BOTH],
  ['c. drain, external worker, concurrency 200 (jobs/s)', ['drain_external_c200', field('jobs_per_s')], ['drain_external_c200', field('jobs_per_s')], true, { ratio: 1.5 }, BOTH],
  ['d. 2,000/s keep_result: push to result fetched p50 (ms)', ['steady_keep_result', field('result_p50_ms')], ['steady_keep_result', field('result_p50_ms')], false, { max: 1 }, OFF],
  ['d. push to result fetched p99 (ms)', ['steady_keep_result', field('result_p99_ms')], ['steady_keep_result', field('result_p99_ms')], false, { max: 5 }, OFF],
  ['d. master CPU per job (µs; BullMQ: producer)', ['steady_keep_result', cpuOf('jqmaster')], ['steady_keep_result', cpuOf('producer')], false, { max: 80 }, OFF],
  ['d. Redis CPU per job (µs)', ['steady_keep_result', cpuOf('redis')], ['steady_keep_result', cpuOf('redis')], false, { max: 40 }, OFF],
  ['d. CPU per job, all processes (µs)', ['steady_keep_result', field('cpu_us_per_job')], ['steady_keep_result', field('cpu_us_per_job')], false, null, OFF],
  { group: 'Classic rows (issue 6; jqbench built-in worker, 16 connections)' },
  ['enqueue, single jobs (jobs/s)', ['enqueue_single', field('jobs_per_s')], ['enqueue_single', field('jobs_per_s')], true, null, BOTH],
  ['enqueue, batches of 100 (jobs/s)', ['enqueue_batch', field('jobs_per_s')], ['enqueue_batch', field('jobs_per_s')], true, null, BOTH],
  ['enqueue: jqmaster batches vs BullMQ add (jobs/s)', ['enqueue_batch', field('jobs_per_s')], ['enqueue_single', field('jobs_per_s')], true, { ratio: 1.5 }, BOTH],
  ['backlog drain (jobs/s)', ['drain', field('jobs_per_s')], ['drain', field('jobs_per_s')], true, { ratio: 1.5 }, BOTH],
  ['sustained e2e, pushers + workers (jobs/s)', ['e2e', field('jobs_per_s')], ['e2e', field('jobs_per_s')], true, { ratio: 2 }, BOTH],
  ['CPU per job in sustained e2e, all processes (µs)', ['e2e', field('cpu_us_per_job')], ['e2e', field('cpu_us_per_job')], false, { ratio: 0.5 }, BOTH],
  ['CPU per job in drain, all processes (µs)', ['drain', field('cpu_us_per_job')], ['drain', field('cpu_us_per_job')], false, null, BOTH],
  ['push ack p99 at 2,000/s (ms)', ['latency', field('ack_p99_ms')], ['latency', field('ack_p99_ms')], false, null, BOTH],
  ['push-to-completion p50 at 2,000/s (ms)', ['latency', field('done_p50_ms')], ['latency', field('done_p50_ms')], false, { max: 0.5 }, BOTH],
  ['push-to-completion p99 at 2,000/s (ms)', ['latency', field('done_p99_ms')], ['latency', field('done_p99_ms')], false, { max: 2 }, BOTH],
  ['BullMQ add-to-"completed" event p99 (ms)', null, ['latency', field('completed_p99_ms')], false, null, BOTH],
  ['Redis bytes per queued job (16-byte argument)', ['memory', field('bytes_per_job')], ['memory', field('bytes_per_job')], false, { max: 150 }, BOTH],
];

// Rows whose Redis commands per job are listed: jqmaster test, BullMQ test.
const REDIS_ROWS = [
  ['a. single pushes', 'push_single_json50', 'push_single_json50'],
  ['b. e2e, jqworker JSON / Worker', 'e2e_single_jqworker-json', 'e2e_single_worker'],
  ['c. drain, concurrency 50', 'drain_external_c50', 'drain_external_c50'],
  ['d. steady 2,000/s keep_result', 'steady_keep_result', 'steady_keep_result'],
];

function median(values) {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

function show(v) {
  if (v === null || v === undefined) return 'n/a';
  if (Math.abs(v) >= 100) return Math.round(v).toLocaleString('en-US');
  return v.toFixed(Math.abs(v) >= 1 ? 2 : 3);
}

function load(file) {
  const runs = {}; // system -> test -> [result]
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const { system, test, result } = JSON.parse(line);
    ((runs[system] ||= {})[test] ||= []).push(result);
  }
  return runs;
}

// The median of value(result) over a system's runs of a test.
function med(runs, system, test, value) {
  return median(((runs[system] || {})[test] || []).map(value));
}

// "redis 12.1 · jqmaster 30.2 · ...": the median CPU µs per job of each process of the runs.
function cpuByProcess(runs, system, test) {
  const results = (runs[system] || {})[test] || [];
  const labels = [...new Set(results.flatMap((r) => Object.keys(r.cpu_s_by_process || {})))];
  return labels.map((l) => `${l} ${show(median(results.map(cpuOf(l))))}`).join(' · ');
}

function verdict(target, higherBetter, jq, ratio) {
  if (!target) return ['', ''];
  if (target.ratio) {
    const goal = `${higherBetter ? '≥' : '≤'} ${target.ratio}×`;
    if (ratio === null) return [goal, 'n/a'];
    return [goal, (higherBetter ? ratio >= target.ratio : ratio <= target.ratio) ? 'yes' : 'no'];
  }
  const goal = `≤ ${target.max}`;
  return [goal, jq === null ? 'n/a' : jq <= target.max ? 'yes' : 'no'];
}

function mainTable(runs) {
  const shown = new Set(); // system/test whose CPU figures are printed already: "as above"
  const cpuCell = (system, test) => {
    const key = `${system}/${test}`;
    if (shown.has(key)) return 'as above';
    shown.add(key);
    return cpuByProcess(runs, system, test);
  };
  const counts = Object.entries(runs).map(([s, t]) => `${s} ${Math.max(...Object.values(t).map((l) => l.length))}`);
  console.log(`\nMedians over repetitions (${counts.join(', ')}). Ratio = jqmaster / BullMQ.`);
  for (const row of ROWS) {
    if (row.group) {
      console.log(`\n${row.group}\n`);
      console.log('| row | priorities | jqmaster | BullMQ | ratio | target | met | jqmaster CPU µs/job by process | BullMQ CPU µs/job by process |');
      console.log('| --- | --- | ---: | ---: | ---: | --- | --- | --- | --- |');
      continue;
    }
    const [label, jqKey, bullKey, higherBetter, target, prios] = row;
    for (const prio of prios) {
      const jq = jqKey ? med(runs, `jqmaster-prio-${prio}`, jqKey[0], jqKey[1]) : null;
      const bull = med(runs, `bullmq-prio-${prio}`, bullKey[0], bullKey[1]);
      const ratio = jq !== null && bull > 0 ? jq / bull : null;
      const [goal, met] = verdict(target, higherBetter, jq, ratio);
      const jqCpu = jqKey ? cpuCell(`jqmaster-prio-${prio}`, jqKey[0]) : '';
      const bullCpu = cpuCell(`bullmq-prio-${prio}`, bullKey[0]);
      console.log(`| ${label} | ${prio} | ${jqKey ? show(jq) : ''} | ${show(bull)} | ${ratio === null ? '' : ratio.toFixed(2)} | ${goal} | ${met} | ${jqCpu} | ${bullCpu} |`);
    }
  }
}

// "fcall 3.01 · publish 1.00": median calls per job of each command, most called first.
function commandsPerJob(runs, system, test) {
  const results = (runs[system] || {})[test] || [];
  const names = [...new Set(results.flatMap((r) => Object.keys(r.redis_by_command || {})))];
  const calls = names.map((n) => [n, median(results.map((r) => ((r.redis_by_command || {})[n] || [])[0]))]);
  const total = calls.reduce((sum, [, c]) => sum + (c || 0), 0);
  return calls.length ? `${show(total)}: ${calls.sort((a, b) => b[1] - a[1]).map(([n, c]) => `${n} ${show(c)}`).join(' · ')}` : '';
}

// "redis 20% · jqmaster 45%": the median share of each process's CPU spent in the kernel.
function systemShares(runs, system, test) {
  const results = ((runs[system] || {})[test] || []).filter((r) => r.cpu_sys_s_by_process);
  const labels = [...new Set(results.flatMap((r) => Object.keys(r.cpu_sys_s_by_process)))];
  const share = (label) => (r) => {
    const all = (r.cpu_s_by_process || {})[label];
    return all > 0 ? r.cpu_sys_s_by_process[label] / all : null;
  };
  return labels.map((l) => `${l} ${Math.round(100 * median(results.map(share(l))))} %`).join(' · ');
}

function systemTable(runs) {
  if (!REDIS_ROWS.some(([, jq]) => ((runs['jqmaster-prio-off'] || {})[jq] || []).some((r) => r.cpu_sys_s_by_process))) return;
  console.log('\nShare of each process\'s CPU spent in the kernel (system time, /proc), priorities off, medians.\n');
  console.log('| row | jqmaster | BullMQ |');
  console.log('| --- | --- | --- |');
  for (const [label, jq, bull] of REDIS_ROWS) {
    console.log(`| ${label} | ${systemShares(runs, 'jqmaster-prio-off', jq)} | ${systemShares(runs, 'bullmq-prio-off', bull)} |`);
  }
}

function redisTable(runs) {
  if (!REDIS_ROWS.some(([, jq]) => (runs['jqmaster-prio-off'] || {})[jq])) return;
  console.log('\nRedis commands per job (INFO commandstats; commands run inside scripts count under their own names too), priorities off, medians.\n');
  console.log('| row | jqmaster | BullMQ |');
  console.log('| --- | --- | --- |');
  for (const [label, jq, bull] of REDIS_ROWS) {
    console.log(`| ${label} | ${commandsPerJob(runs, 'jqmaster-prio-off', jq)} | ${commandsPerJob(runs, 'bullmq-prio-off', bull)} |`);
  }
}

// compare.sh's nginx runs (system nginx, test http_floor): nginx answering row a's requests from
// wrk with a constant, the least one HTTP exchange costs on this machine, beside row a's CPU per
// push from wrk and the half of BullMQ's that row a's target allows.
function floorTable(runs) {
  const floor = (runs.nginx || {}).http_floor;
  if (!floor) return;
  const floorCpu = med(runs, 'nginx', 'http_floor', field('cpu_us_per_job'));
  const jqCpu = med(runs, 'jqmaster-prio-off', 'push_single_json50_wrk', field('cpu_us_per_job'));
  const bullCpu = med(runs, 'bullmq-prio-off', 'push_single_json50', field('cpu_us_per_job'));
  const above = (v) => (v !== null && floorCpu !== null ? show(v - floorCpu) : 'n/a');
  const budget = bullCpu === null ? null : bullCpu / 2;
  console.log(`\nThe floor of one HTTP exchange on this machine: nginx (one worker, no log) answering row a's JSON POSTs from wrk (same connections and time) with a constant 201; medians of ${floor.length}.\n`);
  console.log('| figure | value | by process |');
  console.log('| --- | ---: | --- |');
  console.log(`| requests/s | ${show(med(runs, 'nginx', 'http_floor', field('jobs_per_s')))} | |`);
  console.log(`| CPU per request, nginx and wrk (µs) | ${show(floorCpu)} | ${cpuByProcess(runs, 'nginx', 'http_floor')}; in the kernel: ${systemShares(runs, 'nginx', 'http_floor')} |`);
  console.log(`| row a from wrk, CPU per push above the floor (µs) | ${above(jqCpu)} | of ${show(jqCpu)} in all: ${cpuByProcess(runs, 'jqmaster-prio-off', 'push_single_json50_wrk')} |`);
  console.log(`| row a's CPU target above the floor (µs) | ${above(budget)} | half of BullMQ's ${show(bullCpu)} |`);
}

function syscallTable(runs) {
  const traced = runs['jqmaster-syscalls'];
  if (!traced) return;
  console.log('\nThe master\'s syscalls per job (perf trace -s or strace -c -f, one untimed run each; connections: those jqbench opened).\n');
  console.log('| run | jobs | connections | syscalls per job | the most frequent (calls per job) |');
  console.log('| --- | ---: | ---: | ---: | --- |');
  for (const [test, [r]] of Object.entries(traced)) {
    const top = Object.entries(r.by_syscall || {}).slice(0, 10).map(([n, [c]]) => `${n} ${show(c)}`).join(' · ');
    const connections = [r.connections_opened, r.result_connections_opened].filter((c) => c != null).join(' + ');
    console.log(`| ${test} | ${r.jobs} | ${connections} | ${show(r.syscalls_per_job)} | ${top} |`);
  }
}

// With baseline-* runs (compare.sh BASELINE_BIN=...): per jqmaster figure, the median of each
// build, the ratio current / baseline, and the spread (slowest over fastest run) of each side,
// which is the run-to-run noise the ratio has to be read against.
function beforeAfter(runs) {
  const spread = (system, test, value) => {
    const v = ((runs[system] || {})[test] || []).map(value).filter((x) => typeof x === 'number');
    return v.length > 1 ? Math.max(...v) / Math.min(...v) : null;
  };
  console.log('\nBefore/after: jqmaster now vs the baseline binary (same run, alternating).\n');
  console.log('| figure | priorities | baseline | now | now / baseline | spread baseline | spread now |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |');
  for (const row of ROWS) {
    if (row.group) continue;
    const [label, jqKey, , , , prios] = row;
    if (!jqKey || label.startsWith('enqueue: jqmaster batches')) continue;
    for (const prio of prios) {
      const [test, value] = jqKey;
      const base = med(runs, `baseline-prio-${prio}`, test, value);
      const now = med(runs, `jqmaster-prio-${prio}`, test, value);
      if (base === null && now === null) continue;
      const ratio = base && now !== null ? (now / base).toFixed(2) : '';
      const sb = spread(`baseline-prio-${prio}`, test, value);
      const sn = spread(`jqmaster-prio-${prio}`, test, value);
      console.log(`| ${label} | ${prio} | ${show(base)} | ${show(now)} | ${ratio} | ${sb ? sb.toFixed(2) : ''} | ${sn ? sn.toFixed(2) : ''} |`);
    }
  }
}

function main() {
  const file = process.argv[2];
  if (!file) throw new Error('usage: summarize.js RESULTS.jsonl');
  const runs = load(file);
  mainTable(runs);
  systemTable(runs);
  floorTable(runs);
  redisTable(runs);
  syscallTable(runs);
  if (runs['baseline-prio-off'] || runs['baseline-prio-on']) beforeAfter(runs);
}

main();
