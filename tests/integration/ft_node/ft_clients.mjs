// ft_clients.mjs -- redis-om for Node and node-redis's @redis/search against
// strata's FT.*, as a user would use them, compared with an in-test model.
// Prints PASS/FAIL lines (tests/run.sh). Usage: node ft_clients.mjs <port>
import { createClient, AggregateSteps, AggregateGroupByReducers } from 'redis';
import { Schema, Repository, EntityId } from 'redis-om';

const port = process.argv[2];
const N = 10000;
let failed = 0;

async function check(name, fn) {
  try {
    await fn();
    console.log(`PASS ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e}`);
  }
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

function eqList(got, want, what) {
  assert(JSON.stringify(got) === JSON.stringify(want),
    `${what}: got ${JSON.stringify(got).slice(0, 300)} want ${JSON.stringify(want).slice(0, 300)}`);
}

// A deterministic generator so failures reproduce.
let seed = 12345;
function rnd(n) {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
}

const COUNTRIES = ['US', 'DE', 'FR', 'New Zealand', 'a.b'];
const WORDS = ['hello', 'world', 'strata', 'search', 'running', 'index'];

const client = createClient({ url: `redis://127.0.0.1:${port}` });
await client.connect();

const schema = new Schema('person', {
  name: { type: 'string' },
  country: { type: 'string' },
  age: { type: 'number', sortable: true },
  verified: { type: 'boolean' },
  bio: { type: 'text' },
}, { dataStructure: 'HASH' });
const repo = new Repository(schema, client);
const model = [];

await check('RedisOmCreateIndexAndSave10000Entities', async () => {
  await repo.createIndex();
  for (let i = 0; i < N; i += 500) {
    const batch = [];
    for (let j = i; j < Math.min(N, i + 500); j++) {
      const e = {
        name: `user${j % 1000}`,
        country: COUNTRIES[rnd(COUNTRIES.length)],
        age: rnd(80),
        verified: rnd(2) === 1,
        bio: `${WORDS[rnd(WORDS.length)]} ${WORDS[rnd(WORDS.length)]}`,
      };
      const id = `p${String(j).padStart(6, '0')}`;
      model.push({ ...e, id: `person:${id}` });
      batch.push(repo.save(id, e));
    }
    await Promise.all(batch);
  }
  const info = await client.ft.info('person:index');
  for (let t = 0; t < 400 && String(info.indexing) !== '0'; t++) {
    await new Promise(r => setTimeout(r, 50));
    Object.assign(info, await client.ft.info('person:index'));
  }
  assert(Number(info.numDocs) === N, `numDocs ${info.numDocs}`);
});

const byAgeThenKey = (a, b) => a.age - b.age || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

await check('RedisOmWhereEqAndBetweenSortByPage', async () => {
  for (const c of COUNTRIES) {
    const want = model.filter(m => m.country === c && m.age >= 20 && m.age <= 40).sort(byAgeThenKey);
    const q = () => repo.search().where('country').eq(c).and('age').between(20, 40).sortBy('age', 'ASC');
    const count = await q().return.count();
    assert(count === want.length, `${c}: count ${count} want ${want.length}`);
    for (const off of [0, 7, Math.max(0, want.length - 5)]) {
      const page = await q().return.page(off, 10);
      eqList(page.map(e => `person:${e[EntityId]}`), want.slice(off, off + 10).map(m => m.id), `${c} page ${off}`);
      for (const e of page) {
        const m = model.find(x => x.id === `person:${e[EntityId]}`);
        assert(e.age === m.age && e.country === m.country && e.verified === m.verified && e.bio === m.bio,
          `entity ${e[EntityId]} differs`);
      }
    }
  }
});

await check('RedisOmBooleanTextOrAndNot', async () => {
  const want = model.filter(m => m.verified && (m.country === 'US' || m.country === 'New Zealand') && m.age !== 30);
  const got = await repo.search().where('verified').true()
    .and(s => s.where('country').eq('US').or('country').eq('New Zealand'))
    .and('age').not.eq(30).return.count();
  assert(got === want.length, `count ${got} want ${want.length}`);
  const text = model.filter(m => m.bio.split(' ').includes('strata'));
  assert(await repo.search().where('bio').match('strata').return.count() === text.length, 'text match');
  const dotted = model.filter(m => m.country === 'a.b');
  assert(await repo.search().where('country').eq('a.b').return.count() === dotted.length, 'escaped tag');
  const desc = model.filter(m => m.name === 'user7').sort((a, b) => b.age - a.age || (a.id < b.id ? -1 : 1));
  const top = await repo.search().where('name').eq('user7').sortBy('age', 'DESC').return.page(0, 5);
  eqList(top.map(e => e.age), desc.slice(0, 5).map(m => m.age), 'sort desc');
});

await check('RedisOmRemovedAndExpiredEntitiesDisappear', async () => {
  const victims = model.slice(0, 20);
  await repo.remove(victims.slice(0, 10).map(m => m.id.slice(7)));
  await repo.expire(victims.slice(10).map(m => m.id.slice(7)), 1);
  await new Promise(r => setTimeout(r, 1200));
  const total = await repo.search().return.count();
  assert(total === N - 20, `count after remove/expire ${total}`);
  model.splice(0, 20);
});

await check('NodeRedisFtSearchInfoAggregate', async () => {
  const res = await client.ft.search('person:index', '@country:{DE} @age:[(10 50]', {
    LIMIT: { from: 0, size: 3 }, SORTBY: { BY: 'age', DIRECTION: 'DESC' }, RETURN: ['age', 'country'],
  });
  const want = model.filter(m => m.country === 'DE' && m.age > 10 && m.age <= 50)
    .sort((a, b) => b.age - a.age || (a.id < b.id ? -1 : 1));
  assert(res.total === want.length, `total ${res.total} want ${want.length}`);
  eqList(res.documents.map(d => d.id), want.slice(0, 3).map(m => m.id), 'ft.search order');
  eqList(Object.keys(res.documents[0].value).sort(), ['age', 'country'], 'RETURN fields');
  const agg = await client.ft.aggregate('person:index', '*', {
    STEPS: [{ type: AggregateSteps.GROUPBY, properties: '@country',
      REDUCE: [{ type: AggregateGroupByReducers.COUNT, AS: 'n' }] }],
  });
  const counts = {};
  for (const m of model) counts[m.country] = (counts[m.country] || 0) + 1;
  assert(agg.results.length === COUNTRIES.length, `groups ${agg.results.length}`);
  for (const row of agg.results) assert(Number(row.n) === counts[row.country], `group ${row.country}`);
  const list = await client.ft._list();
  assert(list.includes('person:index'), 'FT._LIST');
  const info = await client.ft.info('person:index');
  assert(info.indexName === 'person:index' && info.attributes.length === 5, 'FT.INFO attributes');
  const check = await client.sendCommand(['IDX.CHECK']);
  assert(check.length === 0, `IDX.CHECK: ${check.slice(0, 3)}`);
});

await check('RedisOmDropIndexAndRecreate', async () => {
  await repo.dropIndex();
  await repo.dropIndex(); // "Unknown Index name" is swallowed by redis-om
  await repo.createIndex();
  let info = await client.ft.info('person:index');
  for (let t = 0; t < 400 && String(info.indexing) !== '0'; t++) {
    await new Promise(r => setTimeout(r, 50));
    info = await client.ft.info('person:index');
  }
  assert(Number(info.numDocs) === model.length, `numDocs ${info.numDocs} want ${model.length}`);
});

await client.quit();
process.exit(failed ? 1 : 0);
