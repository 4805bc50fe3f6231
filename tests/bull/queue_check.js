// queue_check.js -- Bull (npm `bull`, v4) as an application runs it, against
// the server on 127.0.0.1:<port>: one producer adds <jobs> jobs (every 10th
// delayed, every 7th failing twice and retried with a fixed backoff), two
// workers in the same process, each on its own connections, process them,
// and a third Queue listens to the global events (Bull sends them over
// pub/sub). Checks: every job completed exactly once with its return value,
// the retried ones after exactly 3 attempts, no delayed job ran early, every
// job's global:completed event arrived once, and the queue's counts end at
// <jobs> completed and nothing else. Prints a one-line summary; exits 1 with
// the reason on stderr otherwise. Usage: node queue_check.js <port> <jobs>
'use strict';
const Queue = require('bull');

const port = Number(process.argv[2]);
const jobs = Number(process.argv[3] || 1000);
const name = 'check' + process.pid;
const opts = { redis: { host: '127.0.0.1', port } };

function fail(why) {
  console.error(why);
  process.exit(1);
}

async function main() {
  const producer = new Queue(name, opts);
  const listener = new Queue(name, opts);
  const workers = [new Queue(name, opts), new Queue(name, opts)];
  const done = new Map(); // job id -> successful runs
  const runs = new Map(); // job id -> processing calls
  const globalDone = new Map();
  let early = 0;
  const started = Date.now();

  const finished = new Promise((resolve) => {
    listener.on('global:completed', (id) => {
      globalDone.set(id, (globalDone.get(id) || 0) + 1);
      if (globalDone.size === jobs) resolve();
    });
  });
  await listener.isReady();
  for (const [w, q] of workers.entries()) {
    q.process(4, async (job) => {
      const id = String(job.id);
      runs.set(id, (runs.get(id) || 0) + 1);
      if (job.data.delay && Date.now() < job.timestamp + job.data.delay) early++;
      if (job.data.flaky && job.attemptsMade < 2) throw new Error('flaky ' + job.attemptsMade);
      done.set(id, (done.get(id) || 0) + 1);
      return { n: job.data.n * 2, worker: w };
    });
  }
  const want = new Map();
  for (let n = 0; n < jobs; n++) {
    const data = { n };
    const o = {};
    if (n % 10 === 3) o.delay = data.delay = 100 + (n % 5) * 100;
    if (n % 7 === 5) {
      data.flaky = true;
      o.attempts = 3;
      o.backoff = { type: 'fixed', delay: 50 };
    }
    const job = await producer.add(data, o);
    want.set(String(job.id), data);
  }

  let timer;
  const timeout = new Promise((_, reject) => timer =
    setTimeout(() => reject(new Error('timed out; ' + globalDone.size + ' of ' + jobs +
                                      ' global:completed events, ' + done.size + ' jobs done')),
               120000));
  await Promise.race([finished, timeout]);
  clearTimeout(timer);

  for (const [id, data] of want) {
    if (done.get(id) !== 1) fail('job ' + id + ' completed ' + (done.get(id) || 0) + ' times');
    const expectRuns = data.flaky ? 3 : 1;
    if (runs.get(id) !== expectRuns) fail('job ' + id + ' ran ' + runs.get(id) + ' times, not ' + expectRuns);
    if (globalDone.get(id) !== 1) fail('job ' + id + ': ' + globalDone.get(id) + ' global:completed events');
    const job = await producer.getJob(id);
    if (!job || !job.returnvalue || job.returnvalue.n !== data.n * 2)
      fail('job ' + id + ' has return value ' + JSON.stringify(job && job.returnvalue));
    // Bull v4 counts the failed attempts
    if (job.attemptsMade !== expectRuns - 1) fail('job ' + id + ' attemptsMade ' + job.attemptsMade);
  }
  if (early) fail(early + ' delayed jobs ran before their time');
  const counts = await producer.getJobCounts();
  const expect = { waiting: 0, active: 0, completed: jobs, failed: 0, delayed: 0 };
  for (const k of Object.keys(expect))
    if (counts[k] !== expect[k]) fail('counts ' + JSON.stringify(counts));
  const byWorker = [0, 0];
  for (const id of want.keys()) byWorker[(await producer.getJob(id)).returnvalue.worker]++;
  if (!byWorker[0] || !byWorker[1]) fail('one worker did all the jobs: ' + byWorker);
  await Promise.all(workers.map((q) => q.close()));
  await listener.close();
  await producer.obliterate({ force: true });
  await producer.close();
  console.log(jobs + ' jobs completed once each (' + byWorker.join('+') + ' by the two workers), ' +
              'retries and delays as asked, in ' + (Date.now() - started) + ' ms');
}

main().catch((e) => fail(e.stack || String(e)));
