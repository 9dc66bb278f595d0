#!/usr/bin/env node
// Medians and ratios of a bench/compare.sh run: node bench/summarize.js RESULTS.jsonl
// Each input line is {system, test, result} where result is a jqbench or bench.js JSON line.
// Prints a Markdown table: per figure the median over the repetitions for jqmaster and for
// BullMQ (priorities off and on), the ratio jqmaster/BullMQ against each, and the target from
// issue 6 with whether the medians meet it. Ratio targets are judged against the better BullMQ
// configuration, so a target counts as met only if it holds against both.
'use strict';

const fs = require('fs');

const SYSTEMS = ['jqmaster', 'bullmq-prio-off', 'bullmq-prio-on'];

// label, test and field for jqmaster, test and field for BullMQ, higher is better?, target
const ROWS = [
  ['enqueue, single jobs (jobs/s)', ['enqueue_single', 'jobs_per_s'], ['enqueue_single', 'jobs_per_s'], true, null],
  ['enqueue, batches of 100 (jobs/s)', ['enqueue_batch', 'jobs_per_s'], ['enqueue_batch', 'jobs_per_s'], true, null],
  ['enqueue: jqmaster batches vs BullMQ add (jobs/s)', ['enqueue_batch', 'jobs_per_s'], ['enqueue_single', 'jobs_per_s'], true, { ratio: 1.5 }],
  ['backlog drain (jobs/s)', ['drain', 'jobs_per_s'], ['drain', 'jobs_per_s'], true, { ratio: 1.5 }],
  ['sustained e2e, pushers + workers (jobs/s)', ['e2e', 'jobs_per_s'], ['e2e', 'jobs_per_s'], true, { ratio: 2 }],
  ['CPU per job in sustained e2e, all processes (µs)', ['e2e', 'cpu_us_per_job'], ['e2e', 'cpu_us_per_job'], false, { ratio: 0.5 }],
  ['CPU per job in drain, all processes (µs)', ['drain', 'cpu_us_per_job'], ['drain', 'cpu_us_per_job'], false, null],
  ['push ack p99 at 2,000/s (ms)', ['latency', 'ack_p99_ms'], ['latency', 'ack_p99_ms'], false, null],
  ['push-to-completion p50 at 2,000/s (ms)', ['latency', 'done_p50_ms'], ['latency', 'done_p50_ms'], false, { max: 0.5 }],
  ['push-to-completion p99 at 2,000/s (ms)', ['latency', 'done_p99_ms'], ['latency', 'done_p99_ms'], false, { max: 2 }],
  ['BullMQ add-to-"completed" event p50 / p99 (ms)', null, ['latency', 'completed_p50_ms', 'completed_p99_ms'], false, null],
  ['Redis bytes per queued job (16-byte argument)', ['memory', 'bytes_per_job'], ['memory', 'bytes_per_job'], false, { max: 150 }],
];

function median(values) {
  const v = values.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (!v.length) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

function show(v) {
  if (v === null || v === undefined) return 'n/a';
  if (Math.abs(v) >= 100) return Math.round(v).toLocaleString('en-US');
  return v.toFixed(Math.abs(v) >= 1 ? 2 : 3);
}

function main() {
  const file = process.argv[2];
  if (!file) throw new Error('usage: summarize.js RESULTS.jsonl');
  const runs = {}; // system -> test -> [result]
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const { system, test, result } = JSON.parse(line);
    ((runs[system] ||= {})[test] ||= []).push(result);
  }
  const med = (system, test, field) => median(((runs[system] || {})[test] || []).map((r) => r[field]));
  const counts = SYSTEMS.map((s) => Object.values(runs[s] || {}).reduce((n, l) => Math.max(n, l.length), 0));
  console.log(`\nMedians of ${counts.join(' / ')} repetitions (jqmaster / BullMQ priorities off / on). ` +
    'Ratio = jqmaster / BullMQ.\n');
  console.log('| figure | jqmaster | BullMQ, no priorities | BullMQ, priorities | ratio vs no prio | ratio vs prio | target | met |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |');
  for (const [label, jqKey, bullKey, higherBetter, target] of ROWS) {
    const jq = jqKey ? med('jqmaster', ...jqKey) : null;
    const bull = SYSTEMS.slice(1).map((s) => {
      if (bullKey.length === 3) return [med(s, bullKey[0], bullKey[1]), med(s, bullKey[0], bullKey[2])];
      return med(s, ...bullKey);
    });
    const ratios = bull.map((b) => (jq !== null && typeof b === 'number' && b > 0 ? jq / b : null));
    let goal = '';
    let met = '';
    if (target && target.ratio) {
      goal = `${higherBetter ? '≥' : '≤'} ${target.ratio}×`;
      const worst = higherBetter ? Math.min(...ratios.filter((r) => r !== null)) : Math.max(...ratios.filter((r) => r !== null));
      met = ratios.some((r) => r === null) ? 'n/a' : (higherBetter ? worst >= target.ratio : worst <= target.ratio) ? 'yes' : 'no';
    } else if (target && target.max !== undefined) {
      goal = `≤ ${target.max}`;
      met = jq === null ? 'n/a' : jq <= target.max ? 'yes' : 'no';
    }
    const cell = (b) => (Array.isArray(b) ? `${show(b[0])} / ${show(b[1])}` : show(b));
    console.log(`| ${label} | ${jqKey ? show(jq) : ''} | ${cell(bull[0])} | ${cell(bull[1])} | ` +
      `${ratios[0] === null ? '' : ratios[0].toFixed(2)} | ${ratios[1] === null ? '' : ratios[1].toFixed(2)} | ${goal} | ${met} |`);
  }
}

main();
