// queue_check.js -- BullMQ as a user runs it, against the server on the
// port given: a queue of N jobs (some delayed, some failing their first
// attempts and retried with backoff), two workers, and a QueueEvents
// listener (BullMQ's events stream, read with XREAD BLOCK). Checks that
// every job completed exactly once with its result and that the listener
// saw every completion, every failure and every delay. Prints one JSON
// line; exits 0 when all holds.
'use strict';
const { Queue, Worker, QueueEvents } = require('bullmq');

const port = Number(process.argv[2]);
const N = Number(process.argv[3] || 1000);
const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
const name = 'check';

function delayed(i) { return i % 10 === 3; }
function failing(i) { return i % 7 === 5; } // fails its first two attempts

async function main() {
  const t0 = Date.now();
  const queue = new Queue(name, { connection });
  await queue.obliterate({ force: true }).catch(() => {});
  // From the start of the (now empty) events stream: no event is missed
  // between the listener's first XREAD and the first add.
  const events = new QueueEvents(name, { connection, lastEventId: '0-0' });
  await events.waitUntilReady();
  const seen = { completed: new Map(), active: new Set(), waiting: new Set(), delayed: new Set() };
  events.on('completed', ({ jobId, returnvalue }) => {
    seen.completed.set(jobId, (seen.completed.get(jobId) || 0) + 1);
  });
  events.on('active', ({ jobId }) => seen.active.add(jobId));
  events.on('waiting', ({ jobId }) => seen.waiting.add(jobId));
  events.on('delayed', ({ jobId }) => seen.delayed.add(jobId));

  const done = new Map(); // job id -> completions seen by the workers
  const results = new Map();
  const failures = new Map(); // job id -> failed attempts seen by the workers
  const processor = async (job) => {
    if (failing(job.data.i) && job.attemptsMade < 2) throw new Error('try again');
    return { twice: job.data.i * 2 };
  };
  const workers = [1, 2].map(() => {
    const w = new Worker(name, processor, { connection, concurrency: 8 });
    w.on('completed', (job, rv) => {
      done.set(job.id, (done.get(job.id) || 0) + 1);
      results.set(job.id, rv);
    });
    w.on('failed', (job) => failures.set(job.id, (failures.get(job.id) || 0) + 1));
    return w;
  });

  const ids = new Map(); // job id -> i
  const adds = [];
  for (let i = 0; i < N; i++) {
    const opts = { attempts: 3, backoff: { type: 'fixed', delay: 50 } };
    if (delayed(i)) opts.delay = 300;
    adds.push(queue.add('job', { i }, opts).then((job) => ids.set(job.id, i)));
  }
  await Promise.all(adds);

  const deadline = Date.now() + 120000;
  while (Date.now() < deadline) {
    const all = [...ids.keys()];
    if (all.every((id) => seen.completed.has(id)) && done.size === N) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 500)); // a duplicate would show up now
  const problems = [];
  for (const [id, i] of ids) {
    if (done.get(id) !== 1) problems.push(`job ${id} completed ${done.get(id) || 0} times`);
    const rv = results.get(id);
    if (!rv || rv.twice !== i * 2) problems.push(`job ${id} returned ${JSON.stringify(rv)}`);
    if (seen.completed.get(id) !== 1) problems.push(`completed event of ${id} seen ${seen.completed.get(id) || 0} times`);
    if ((failures.get(id) || 0) !== (failing(i) ? 2 : 0))
      problems.push(`job ${id} failed ${failures.get(id) || 0} times`);
    // a delayed job, and a failed one waiting out its backoff, are announced
    if ((delayed(i) || failing(i)) && !seen.delayed.has(id)) problems.push(`no delayed event for ${id}`);
    if (!seen.active.has(id)) problems.push(`no active event for ${id}`);
    if (!delayed(i) && !seen.waiting.has(id)) problems.push(`no waiting event for ${id}`);
  }
  const counts = await queue.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed');
  if (counts.completed !== N || counts.failed || counts.waiting || counts.active || counts.delayed)
    problems.push(`job counts ${JSON.stringify(counts)}`);
  await Promise.all(workers.map((w) => w.close()));
  await events.close();
  await queue.close();
  const out = { jobs: N, completed: done.size, events_completed: seen.completed.size,
                failed_attempts: [...failures.values()].reduce((a, b) => a + b, 0),
                events_delayed: seen.delayed.size, events_active: seen.active.size, seconds: (Date.now() - t0) / 1000,
                problems: problems.slice(0, 10), nproblems: problems.length };
  console.log(JSON.stringify(out));
  process.exit(problems.length ? 1 : 0);
}

main().catch((e) => {
  console.log(JSON.stringify({ error: String(e && e.stack || e) }));
  process.exit(1);
});
