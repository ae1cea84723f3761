// What teams typically hand-roll, as the reference for the redemption engine: express + pg, doing the same work per
// redemption (check the API key against the same api_keys table, lock the voucher row with SELECT ... FOR UPDATE, count
// the use, insert the redemption and its outbox event, commit), one transaction per request, on the same PostgreSQL.
// Correct, and serialized on the row lock. Usage: node naive-peer.mjs PORT DATABASE_URL (its own tables, made here).
import { createHash, timingSafeEqual } from 'node:crypto';
import express from 'express';
import pg from 'pg';

const [port, url] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: 20 });

await pool.query(`CREATE TABLE IF NOT EXISTS naive_vouchers (code text PRIMARY KEY, redemption_limit int, redeemed_count int NOT NULL DEFAULT 0, amount_off int NOT NULL)`);
await pool.query(`CREATE TABLE IF NOT EXISTS naive_redemptions (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), code text NOT NULL, amount int NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
await pool.query(`CREATE TABLE IF NOT EXISTS naive_events (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), type text NOT NULL, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
// The checkout a shop really sends (idempotency key, a named customer, an order with items): its own tables.
await pool.query(`CREATE TABLE IF NOT EXISTS naive_customers (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), source_id text UNIQUE NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
await pool.query(`CREATE TABLE IF NOT EXISTS naive_idempotency (key text PRIMARY KEY, response jsonb, created_at timestamptz NOT NULL DEFAULT now())`);
await pool.query(`CREATE TABLE IF NOT EXISTS naive_orders (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), redemption_id uuid NOT NULL, customer_id uuid NOT NULL, amount int NOT NULL, items jsonb NOT NULL)`);

async function authorized(header) {
  const match = /^Bearer service_([A-Za-z0-9]{12})_([A-Za-z0-9]{40})$/.exec(header ?? '');
  if (!match) return false;
  const { rows } = await pool.query('SELECT secret_hash FROM api_keys WHERE prefix = $1 AND revoked_at IS NULL', [match[1]]);
  return rows.length === 1 && timingSafeEqual(rows[0].secret_hash, createHash('sha256').update(match[2]).digest());
}

const app = express();
app.use(express.json({ limit: '10mb' }));
app.post('/seed', async (req, res) => {
  const { codes, limit, customers = [] } = req.body;
  await pool.query(
    `INSERT INTO naive_vouchers (code, redemption_limit, amount_off) SELECT unnest($1::text[]), $2, 500 ON CONFLICT (code) DO NOTHING`,
    [codes, limit],
  );
  await pool.query(`INSERT INTO naive_customers (source_id) SELECT unnest($1::text[]) ON CONFLICT (source_id) DO NOTHING`, [customers]);
  res.json({ ok: true });
});
app.post('/vouchers/:code/redemption', async (req, res) => {
  if (!(await authorized(req.headers.authorization))) return res.status(401).json({ code: 'unauthorized' });
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query('SELECT redemption_limit, redeemed_count, amount_off FROM naive_vouchers WHERE code = $1 FOR UPDATE', [req.params.code]);
    const v = rows[0];
    if (!v) {
      await client.query('ROLLBACK');
      return res.json({ ok: false, code: 'voucher_not_found' });
    }
    if (v.redemption_limit !== null && v.redeemed_count >= v.redemption_limit) {
      await client.query('ROLLBACK');
      return res.json({ ok: false, code: 'redemption_limit_reached' });
    }
    const amount = Math.min(v.amount_off, req.body.order?.amount ?? 0);
    await client.query('UPDATE naive_vouchers SET redeemed_count = redeemed_count + 1 WHERE code = $1', [req.params.code]);
    const inserted = await client.query('INSERT INTO naive_redemptions (code, amount) VALUES ($1, $2) RETURNING id', [req.params.code, amount]);
    await client.query('INSERT INTO naive_events (type, payload) VALUES ($1, $2)', [
      'voucher.redeemed',
      { redemptionId: inserted.rows[0].id, voucherCode: req.params.code, amount },
    ]);
    await client.query('COMMIT');
    res.json({ ok: true, redemption: { id: inserted.rows[0].id, amount } });
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    res.status(500).json({ error: String(error) });
  } finally {
    client.release();
  }
});
// A checkout as shops send it: Idempotency-Key (a replay answers the stored response), the customer by sourceId
// (created when new), the order with its items stored, then the same redemption as above, one transaction.
app.post('/checkout/:code/redemption', async (req, res) => {
  if (!(await authorized(req.headers.authorization))) return res.status(401).json({ code: 'unauthorized' });
  const key = req.headers['idempotency-key'];
  const { order, customer } = req.body;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const claimed = await client.query('INSERT INTO naive_idempotency (key) VALUES ($1) ON CONFLICT (key) DO NOTHING RETURNING key', [key]);
    if (!claimed.rows.length) {
      const stored = await client.query('SELECT response FROM naive_idempotency WHERE key = $1', [key]);
      await client.query('ROLLBACK');
      return res.json(stored.rows[0]?.response ?? { ok: false, code: 'in_progress' });
    }
    const shopper = await client.query(
      `INSERT INTO naive_customers (source_id) VALUES ($1) ON CONFLICT (source_id) DO UPDATE SET source_id = EXCLUDED.source_id RETURNING id`,
      [customer.sourceId],
    );
    const { rows } = await client.query('SELECT redemption_limit, redeemed_count, amount_off FROM naive_vouchers WHERE code = $1 FOR UPDATE', [req.params.code]);
    const v = rows[0];
    if (!v || (v.redemption_limit !== null && v.redeemed_count >= v.redemption_limit)) {
      await client.query('ROLLBACK');
      return res.json({ ok: false, code: v ? 'redemption_limit_reached' : 'voucher_not_found' });
    }
    const amount = Math.min(v.amount_off, order.amount);
    await client.query('UPDATE naive_vouchers SET redeemed_count = redeemed_count + 1 WHERE code = $1', [req.params.code]);
    const inserted = await client.query('INSERT INTO naive_redemptions (code, amount) VALUES ($1, $2) RETURNING id', [req.params.code, amount]);
    const redemptionId = inserted.rows[0].id;
    await client.query('INSERT INTO naive_orders (redemption_id, customer_id, amount, items) VALUES ($1, $2, $3, $4)', [redemptionId, shopper.rows[0].id, order.amount, JSON.stringify(order.items ?? [])]);
    await client.query('INSERT INTO naive_events (type, payload) VALUES ($1, $2)', ['voucher.redeemed', { redemptionId, voucherCode: req.params.code, amount, customerId: shopper.rows[0].id }]);
    const response = { ok: true, redemption: { id: redemptionId, amount } };
    await client.query('UPDATE naive_idempotency SET response = $2 WHERE key = $1', [key, response]);
    await client.query('COMMIT');
    res.json(response);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    res.status(500).json({ error: String(error) });
  } finally {
    client.release();
  }
});
// Qualification as a peer does it: every active tier of the workspace (with its rules) and the customer's vouchers read
// per request, each tier's rules evaluated in turn, the results sorted. Same data, same PostgreSQL, no index.
function holds(node, order) {
  if (node.all) return node.all.every((n) => holds(n, order));
  if (node.any) return node.any.some((n) => holds(n, order));
  if (node.not) return !holds(node.not, order);
  const values =
    node.field === 'order.amount' ? [order.amount]
    : node.field === 'order.currency' ? [order.currency]
    : node.field === 'order.items.productId' ? (order.items ?? []).map((i) => i.productId)
    : [];
  switch (node.op) {
    case 'eq': case 'contains': return values.includes(node.value);
    case 'gte': return values.some((v) => v >= node.value);
    case 'gt': return values.some((v) => v > node.value);
    case 'in': return values.some((v) => node.value.includes(v));
    default: return false;
  }
}
app.post('/workspaces/:workspaceId/qualifications', async (req, res) => {
  if (!(await authorized(req.headers.authorization))) return res.status(401).json({ code: 'unauthorized' });
  const { order, customer } = req.body;
  const tiers = await pool.query(
    `SELECT v.id, v.discount, coalesce(v.currency, c.currency) AS currency,
            ARRAY(SELECT r.conditions FROM validation_rules r WHERE r.id = ANY (v.validation_rule_ids)) AS rules
       FROM vouchers v LEFT JOIN campaigns c ON c.id = v.campaign_id
      WHERE v.workspace_id = $1 AND v.kind = 'TIER' AND v.active AND coalesce(c.active, true)`,
    [req.params.workspaceId],
  );
  const own = customer?.sourceId
    ? await pool.query(
        `SELECT v.code, v.discount FROM vouchers v JOIN customers cu ON cu.id = v.customer_id
          WHERE v.workspace_id = $1 AND cu.source_id = $2 AND v.active`,
        [req.params.workspaceId, customer.sourceId],
      )
    : { rows: [] };
  const offer = (discount) => (discount.type === 'PERCENT' ? Math.round((order.amount * discount.percentOff) / 100) : Math.min(order.amount, discount.amountOff ?? 0));
  const data = [
    ...tiers.rows.filter((t) => (!t.currency || t.currency === order.currency) && t.rules.every((r) => holds(r, order))).map((t) => ({ tierId: t.id, amount: offer(t.discount) })),
    ...own.rows.map((v) => ({ code: v.code, amount: offer(v.discount) })),
  ].sort((a, b) => b.amount - a.amount);
  res.json({ data: data.slice(0, 20) });
});
app.listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
