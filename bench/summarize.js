#!/usr/bin/env node
// Medians and ratios of a bench/compare.sh run: node bench/summarize.js RESULTS.jsonl
// Each input line is {system, test, result} where result is a jqbench or bench.js JSON line;
// systems are jqmaster-prio-off|on and bullmq-prio-off|on. Prints a Markdown table: per figure
// the median over the repetitions for each system, the ratio jqmaster/BullMQ with priorities off
// and with priorities on (like for like), and the target from issue 6 with whether the medians
// meet it in both cases.
'use strict';

const fs = require('fs');

const PAIRS = [['jqmaster-prio-off', 'bullmq-prio-off'], ['jqmaster-prio-on', 'bullmq-prio-on']];

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

// With baseline-* runs (compare.sh BASELINE_BIN=...): per jqmaster figure, the median of each
// build, the ratio current / baseline, and the spread (slowest over fastest run) of each side,
// which is the run-to-run noise the ratio has to be read against.
function beforeAfter(runs, med) {
  const spread = (system, key) => {
    const v = ((runs[system] || {})[key[0]] || []).map((r) => r[key[1]]).filter((x) => typeof x === 'number');
    return v.length > 1 ? Math.max(...v) / Math.min(...v) : null;
  };
  console.log('\nBefore/after: jqmaster now vs the baseline binary (same run, alternating).\n');
  console.log('| figure | priorities | baseline | now | now / baseline | spread baseline | spread now |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |');
  for (const [label, jqKey] of ROWS) {
    if (!jqKey || label.startsWith('enqueue: jqmaster batches')) continue;
    for (const prio of ['off', 'on']) {
      const base = med(`baseline-prio-${prio}`, jqKey, jqKey[1]);
      const now = med(`jqmaster-prio-${prio}`, jqKey, jqKey[1]);
      const ratio = base && now !== null ? (now / base).toFixed(2) : '';
      const sb = spread(`baseline-prio-${prio}`, jqKey);
      const sn = spread(`jqmaster-prio-${prio}`, jqKey);
      console.log(`| ${label} | ${prio} | ${show(base)} | ${show(now)} | ${ratio} | ${sb ? sb.toFixed(2) : ''} | ${sn ? sn.toFixed(2) : ''} |`);
    }
  }
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
  const med = (system, key, field) => median(((runs[system] || {})[key[0]] || []).map((r) => r[field]));
  const reps = Object.entries(runs).map(([s, t]) => `${s} ${Math.max(...Object.values(t).map((l) => l.length))}`);
  console.log(`\nMedians over repetitions (${reps.join(', ')}). Ratio = jqmaster / BullMQ.\n`);
  console.log('| figure | jqmaster | BullMQ | ratio | jqmaster, priorities | BullMQ, priorities | ratio | target | met |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |');
  for (const [label, jqKey, bullKey, higherBetter, target] of ROWS) {
    const cells = [];
    const verdicts = [];
    for (const [jqSystem, bullSystem] of PAIRS) {
      const jq = jqKey ? med(jqSystem, jqKey, jqKey[1]) : null;
      const bull = bullKey.slice(1).map((field) => med(bullSystem, bullKey, field));
      const ratio = jq !== null && bull[0] > 0 ? jq / bull[0] : null;
      cells.push(jqKey ? show(jq) : '', bull.map(show).join(' / '), ratio === null ? '' : ratio.toFixed(2));
      if (target && target.ratio) {
        verdicts.push(ratio === null ? null : higherBetter ? ratio >= target.ratio : ratio <= target.ratio);
      } else if (target && target.max !== undefined) {
        verdicts.push(jq === null ? null : jq <= target.max);
      }
    }
    let goal = '';
    if (target) goal = target.ratio ? `${higherBetter ? '≥' : '≤'} ${target.ratio}×` : `≤ ${target.max}`;
    const met = !verdicts.length ? '' : verdicts.includes(null) ? 'n/a' : verdicts.every((v) => v) ? 'yes' : 'no';
    console.log(`| ${label} | ${cells.join(' | ')} | ${goal} | ${met} |`);
  }
  if (runs['baseline-prio-off'] || runs['baseline-prio-on']) beforeAfter(runs, med);
}

main();
