// The floor under the bench's redeem rows (issue 36): the least any service can do for the same durable work, to tell a
// target out of reach on this machine from one the service merely misses. node:http (no framework), the API key checked
// once and remembered, the body parsed, the voucher's count and limit held in memory by one writer, and every
// redemption group-committed as the service's engine does (one batch in flight, one statement a batch): the voucher's
// counter, the redemption row, its outbox event, and as the request asks the idempotency key with its answer (the
// body's SHA-256 beside it), a customer looked up by sourceId (once a turn for all requests of the turn) or created in
// the batch's statement with its customer.created event, and the order's items. Its own tables, with the indexes the
// service's listings need (redemptions by time, voucher, customer; events by time and undispatched; keys by time;
// customers by sourceId, by time and by email), on the same PostgreSQL. No validation, rules, budgets, rollups or metrics: a floor, not a peer
// (a customer created meanwhile under the same sourceId, or a key sent again, fails its batch with a 503: the bench's
// new customers and keys are random).
// With a third argument `thread`, the writer (the vouchers' state, the decisions, the batches and their statements) runs
// in a worker thread of its own, as the design card's partition does, and the two threads exchange one message a turn
// each way (the calls the HTTP thread read in a turn; the answers a commit or a turn's validations release): the same
// work plus the hand-off the design asks for, so that a target the floor meets only without that hand-off is known.
// Routes: POST /seed {codes, limit?, customers}, POST /writer (the deciding thread's id, its batches and writes),
// POST /validate/:code and POST /redeem/:code ({order, customer?}; an Idempotency-Key header claims a key).
// Usage: node lean-floor.mjs PORT DATABASE_URL [thread]
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { isMainThread, parentPort, threadId, Worker, workerData } from 'node:worker_threads';
import pg from 'pg';

const [port, url, mode] = isMainThread ? process.argv.slice(2) : [undefined, workerData.url, 'writer'];
// Its four connections (a thread's) are opened before it answers and kept (no idle timeout): none is opened during a
// run, where a PostgreSQL shared with other work may be at its max_connections for a moment ("too many clients").
const CONNECTIONS = 4;
const pool = new pg.Pool({ connectionString: url, max: CONNECTIONS, idleTimeoutMillis: 0 });
async function openConnections() {
  const opened = [];
  try {
    for (let attempt = 0; opened.length < CONNECTIONS; attempt++) {
      try {
        opened.push(await pool.connect());
      } catch (error) {
        if (attempt >= 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    for (const client of opened) client.release();
  }
}
await openConnections();

if (isMainThread) await pool.query(`
  CREATE TABLE IF NOT EXISTS lean_vouchers (code text PRIMARY KEY, redemption_limit int, redeemed_count int NOT NULL DEFAULT 0, amount_off int NOT NULL);
  CREATE TABLE IF NOT EXISTS lean_customers (id uuid PRIMARY KEY, source_id text UNIQUE NOT NULL, email text, created_at timestamptz NOT NULL DEFAULT now());
  CREATE INDEX IF NOT EXISTS lean_customers_by_created ON lean_customers (created_at DESC, id DESC);
  CREATE INDEX IF NOT EXISTS lean_customers_by_email ON lean_customers (lower(email));
  CREATE TABLE IF NOT EXISTS lean_redemptions (id uuid PRIMARY KEY, code text NOT NULL, amount int NOT NULL, customer_id uuid, order_amount int,
                                               items jsonb, created_at timestamptz NOT NULL);
  CREATE INDEX IF NOT EXISTS lean_redemptions_by_created ON lean_redemptions (created_at DESC, id DESC);
  CREATE INDEX IF NOT EXISTS lean_redemptions_by_voucher ON lean_redemptions (code, created_at DESC, id DESC);
  CREATE INDEX IF NOT EXISTS lean_redemptions_by_customer ON lean_redemptions (customer_id, created_at DESC, id DESC) WHERE customer_id IS NOT NULL;
  CREATE TABLE IF NOT EXISTS lean_events (id uuid PRIMARY KEY, type text NOT NULL, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
                                          dispatched_at timestamptz);
  CREATE INDEX IF NOT EXISTS lean_events_by_created ON lean_events (created_at DESC, id DESC);
  CREATE INDEX IF NOT EXISTS lean_events_undispatched ON lean_events (created_at) WHERE dispatched_at IS NULL;
  CREATE TABLE IF NOT EXISTS lean_keys (key text PRIMARY KEY, request_hash text NOT NULL, response json NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
  CREATE INDEX IF NOT EXISTS lean_keys_by_created ON lean_keys USING brin (created_at);
`);

/** A time-ordered UUID (version 7), as the service's ids: new rows land at the right edge of their indexes. */
function uuidv7() {
  const b = randomBytes(16);
  b.writeUIntBE(Date.now(), 0, 6);
  b[6] = 0x70 | (b[6] & 0x0f);
  b[8] = 0x80 | (b[8] & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const keysSeen = new Set();
async function authorized(header) {
  if (keysSeen.has(header)) return true;
  const match = /^Bearer service_([A-Za-z0-9]{12})_([A-Za-z0-9]{40})$/.exec(header ?? '');
  if (!match) return false;
  const { rows } = await pool.query('SELECT secret_hash FROM api_keys WHERE prefix = $1 AND revoked_at IS NULL', [match[1]]);
  const ok = rows.length === 1 && timingSafeEqual(rows[0].secret_hash, createHash('sha256').update(match[2]).digest());
  if (ok) keysSeen.add(header);
  return ok;
}

// A voucher's state, read once: requests racing for a voucher not yet held share one read, and a read never replaces
// a state already held (its count may have moved on since the read began: a limit would then be passed in memory and
// the batch refused by the statement's guard).
const vouchers = new Map();
const reading = new Map();
let readsSince = 0; // moves when the states are dropped (a failed batch): a read begun before is not kept
function voucherOf(code) {
  if (vouchers.has(code)) return vouchers.get(code);
  let read = reading.get(code);
  if (!read) {
    const since = readsSince;
    read = pool
      .query('SELECT redemption_limit, redeemed_count, amount_off FROM lean_vouchers WHERE code = $1', [code])
      .then(({ rows }) => {
        const state = rows[0] ? { limit: rows[0].redemption_limit, count: rows[0].redeemed_count, amountOff: rows[0].amount_off } : null;
        if (since !== readsSince) return voucherOf(code);
        if (!vouchers.has(code)) vouchers.set(code, state);
        return vouchers.get(code);
      })
      .finally(() => {
        if (reading.get(code) === read) reading.delete(code);
      });
    reading.set(code, read);
  }
  return read;
}

function dropVoucherStates() {
  vouchers.clear();
  reading.clear();
  readsSince += 1;
}

// Customers named in one event-loop turn, looked up in one statement.
let lookups = null;
function customerIdOf(sourceId) {
  if (!lookups) {
    lookups = new Map();
    setImmediate(async () => {
      const turn = lookups;
      lookups = null;
      try {
        const { rows } = await pool.query({ name: 'lean-customers', text: 'SELECT id, source_id FROM lean_customers WHERE source_id = ANY($1::text[])', values: [[...turn.keys()]] });
        const found = new Map(rows.map((r) => [r.source_id, r.id]));
        for (const [s, waiters] of turn) for (const w of waiters) w.resolve(found.get(s) ?? null);
      } catch (error) {
        for (const waiters of turn.values()) for (const w of waiters) w.reject(error);
      }
    });
  }
  return new Promise((resolve, reject) => {
    const waiters = lookups.get(sourceId) ?? [];
    waiters.push({ resolve, reject });
    lookups.set(sourceId, waiters);
  });
}

const COMMIT = `WITH cust AS (
  INSERT INTO lean_customers (id, source_id) SELECT * FROM unnest($1::uuid[], $2::text[]) RETURNING 1
), keys AS (
  INSERT INTO lean_keys (key, request_hash, response) SELECT * FROM unnest($3::text[], $4::text[], $5::json[]) ON CONFLICT DO NOTHING RETURNING 1
), counted AS (
  UPDATE lean_vouchers v SET redeemed_count = v.redeemed_count + d.n FROM unnest($6::text[], $7::int[]) AS d(code, n)
   WHERE v.code = d.code AND (v.redemption_limit IS NULL OR v.redeemed_count + d.n <= v.redemption_limit) RETURNING 1
), red AS (
  INSERT INTO lean_redemptions (id, code, amount, customer_id, order_amount, items, created_at)
  SELECT * FROM unnest($8::uuid[], $9::text[], $10::int[], $11::uuid[], $12::int[], $13::jsonb[], $14::timestamptz[]) RETURNING 1
), ev AS (
  INSERT INTO lean_events (id, type, payload) SELECT * FROM unnest($15::uuid[], $16::text[], $17::jsonb[]) RETURNING 1
)
SELECT 1 / ((SELECT count(*) FROM counted) = cardinality($6::text[]) AND (SELECT count(*) FROM keys) = cardinality($3::text[])
            AND (SELECT count(*) FROM red) >= 0 AND (SELECT count(*) FROM ev) >= 0 AND (SELECT count(*) FROM cust) >= 0)::int AS ok`;

// One batch in flight: what arrives meanwhile waits and goes in the next, in one statement.
let queue = [];
let inFlight = false;
/** Batches committed and the redemptions in them, for POST /writer. */
const committed = { batches: 0, writes: 0 };
let kickQueued = false;
function enqueue(entry) {
  queue.push(entry);
  // After the other calls of the same message (or HTTP read) have queued too: they go in one batch.
  if (inFlight || kickQueued) return;
  kickQueued = true;
  queueMicrotask(() => {
    kickQueued = false;
    if (!inFlight) void commitNext();
  });
}
async function commitNext() {
  if (!queue.length) return;
  inFlight = true;
  const batch = queue;
  queue = [];
  const cols = Array.from({ length: 17 }, () => []);
  const uses = new Map();
  const decided = [];
  for (const e of batch) {
    const v = vouchers.get(e.code);
    if (!v) {
      // Its state was dropped after it was read (a failed batch): nothing is decided on it.
      decided.push([e, 503, { code: 'commit_failed', detail: 'the voucher state was dropped after a failed batch; retry' }]);
      continue;
    }
    const held = uses.get(e.code) ?? 0;
    if (v.limit !== null && v.count + held + 1 > v.limit) {
      decided.push([e, 200, { valid: false, code: 'redemption_limit_reached' }]);
      continue;
    }
    uses.set(e.code, held + 1);
    const id = uuidv7();
    const amount = Math.min(v.amountOff, e.order.amount);
    const answer = { id, object: 'redemption', result: 'SUCCESS', voucher: { code: e.code }, amount, order: { amount: e.order.amount, discountAmount: amount, totalAmount: e.order.amount - amount }, customerId: e.customerId };
    if (e.newCustomer) {
      cols[0].push(e.customerId), cols[1].push(e.sourceId);
      cols[14].push(uuidv7()), cols[15].push('customer.created'), cols[16].push(JSON.stringify({ id: e.customerId, sourceId: e.sourceId }));
    }
    if (e.key) cols[2].push(e.key), cols[3].push(e.hash), cols[4].push(JSON.stringify(answer));
    cols[7].push(id), cols[8].push(e.code), cols[9].push(amount), cols[10].push(e.customerId), cols[11].push(e.order.amount);
    cols[12].push(e.order.items ? JSON.stringify(e.order.items) : null), cols[13].push(new Date());
    cols[14].push(uuidv7()), cols[15].push('voucher.redeemed'), cols[16].push(JSON.stringify({ redemptionId: id, voucherCode: e.code, amount, customerId: e.customerId }));
    decided.push([e, 200, answer]);
  }
  for (const [code, n] of uses) cols[5].push(code), cols[6].push(n);
  try {
    if (uses.size) await pool.query({ name: 'lean-commit', text: COMMIT, values: cols });
    committed.batches += 1;
    committed.writes += cols[7].length;
    for (const [code, n] of uses) vouchers.get(code).count += n;
    for (const [e, status, body] of decided) e.reply(status, body);
  } catch (error) {
    dropVoucherStates();
    for (const e of batch) e.reply(503, { code: 'commit_failed', detail: String(error.message) });
  }
  inFlight = false;
  void commitNext();
}

function reply(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The writer's part of a call ({ type: 'validate' | 'redeem', code, order, and a redemption's customer and key}). */
async function decide(call, reply) {
  if (call.type === 'whereabouts') return reply(200, { threadId, ...committed });
  const v = await voucherOf(call.code);
  if (!v) return reply(404, { code: 'voucher_not_found' });
  const amount = Math.min(v.amountOff, call.order.amount);
  if (call.type === 'validate') {
    return reply(200, { valid: v.limit === null || v.count < v.limit, code: call.code, discount: { type: 'AMOUNT', amountOff: v.amountOff }, order: { amount: call.order.amount, discountAmount: amount, totalAmount: call.order.amount - amount } });
  }
  enqueue({ ...call, reply });
}

/** Calls to the writer thread and its answers, one message a turn each way. */
function writerLink(writer) {
  const waiting = new Map();
  let next = 0;
  let outgoing = null;
  writer.on('error', (error) => {
    console.error('the floor\'s writer thread failed:', error);
    process.exit(1);
  });
  writer.on('message', (answers) => {
    for (const [id, status, body] of answers) {
      waiting.get(id)(status, body);
      waiting.delete(id);
    }
  });
  return (call, reply) => {
    const id = ++next;
    waiting.set(id, reply);
    if (!outgoing) {
      outgoing = [];
      setImmediate(() => {
        writer.postMessage(outgoing);
        outgoing = null;
      });
    }
    outgoing.push({ id, call });
  };
}

/** The writer thread: decides what the HTTP thread sends, and answers in one message a turn. */
function serveWriter() {
  let answers = null;
  const answer = (id) => (status, body) => {
    if (!answers) {
      answers = [];
      setImmediate(() => {
        parentPort.postMessage(answers);
        answers = null;
      });
    }
    answers.push([id, status, body]);
  };
  parentPort.on('message', (calls) => {
    for (const { id, call } of calls) decide(call, answer(id)).catch((error) => answer(id)(400, { code: 'bad_request', detail: String(error.message) }));
  });
}

const toWriter = mode === 'thread' ? writerLink(new Worker(new URL(import.meta.url), { workerData: { url } })) : decide;

async function handle(req, res, raw) {
  if (req.url === '/seed') {
    const { codes, limit = null, customers = [] } = JSON.parse(raw);
    await pool.query(`INSERT INTO lean_vouchers (code, redemption_limit, amount_off) SELECT unnest($1::text[]), $2, 500 ON CONFLICT (code) DO NOTHING`, [codes, limit]);
    await pool.query(`INSERT INTO lean_customers (id, source_id) SELECT gen_random_uuid(), unnest($1::text[]) ON CONFLICT (source_id) DO NOTHING`, [customers]);
    return reply(res, 200, { ok: true });
  }
  // Which thread decides (0: the HTTP thread's own).
  if (req.method === 'POST' && req.url === '/writer') return toWriter({ type: 'whereabouts' }, (status, answered) => reply(res, status, answered));
  const route = /^\/(validate|redeem)\/([^/?]+)$/.exec(req.url ?? '');
  if (req.method !== 'POST' || !route) return reply(res, 404, { code: 'not_found' });
  if (!(await authorized(req.headers.authorization))) return reply(res, 401, { code: 'unauthorized' });
  const body = JSON.parse(raw);
  const code = decodeURIComponent(route[2]);
  const answer = (status, answered) => reply(res, status, answered);
  if (route[1] === 'validate') return toWriter({ type: 'validate', code, order: body.order }, answer);
  const sourceId = body.customer?.sourceId;
  let customerId = null;
  let newCustomer = false;
  if (sourceId !== undefined) {
    customerId = await customerIdOf(sourceId);
    if (customerId === null) (customerId = uuidv7()), (newCustomer = true);
  }
  const key = req.headers['idempotency-key'];
  const hash = key ? createHash('sha256').update(req.url).update(raw).digest('base64url') : undefined;
  return toWriter({ type: 'redeem', code, order: body.order, customerId, sourceId, newCustomer, key, hash }, answer);
}

if (!isMainThread) serveWriter();
else createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((error) => reply(res, 400, { code: 'bad_request', detail: String(error.message) }));
  });
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
