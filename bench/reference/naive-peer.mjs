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

async function authorized(header) {
  const match = /^Bearer service_([A-Za-z0-9]{12})_([A-Za-z0-9]{40})$/.exec(header ?? '');
  if (!match) return false;
  const { rows } = await pool.query('SELECT secret_hash FROM api_keys WHERE prefix = $1 AND revoked_at IS NULL', [match[1]]);
  return rows.length === 1 && timingSafeEqual(rows[0].secret_hash, createHash('sha256').update(match[2]).digest());
}

const app = express();
app.use(express.json({ limit: '10mb' }));
app.post('/seed', async (req, res) => {
  const { codes, limit } = req.body;
  await pool.query(
    `INSERT INTO naive_vouchers (code, redemption_limit, amount_off) SELECT unnest($1::text[]), $2, 500 ON CONFLICT (code) DO NOTHING`,
    [codes, limit],
  );
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
app.listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
