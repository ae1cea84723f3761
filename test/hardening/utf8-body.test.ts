// One rule for request bodies on every route: UTF-8 JSON. Invalid bytes are a 400 (never replaced by U+FFFD and
// stored), a charset other than UTF-8 is a 415, and a leading byte-order mark is dropped: on the hot path, on express
// (REST, RPC, MCP) and on the hot routes when express serves them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let viaExpress: TestService;
let key: string;

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const INVALID: Record<string, Buffer> = {
  'a lone continuation byte': Buffer.from([0x80]),
  'a 0xff byte': Buffer.from([0xff]),
  'a truncated sequence': Buffer.from([0xc3, 0x28]),
  'an overlong slash': Buffer.from([0xc0, 0xaf]),
  'an encoded surrogate': Buffer.from([0xed, 0xa0, 0x80]),
  'a code point past U+10FFFF': Buffer.from([0xf4, 0x90, 0x80, 0x80]),
};

/** `{"<field>":"<bytes>", ...rest}` with raw bytes inside the string value. */
function bodyWith(field: string, bytes: Buffer, rest = ''): Buffer {
  return Buffer.concat([Buffer.from(`{${rest}"${field}":"`), bytes, Buffer.from('"}')]);
}

async function post(base: string, path: string, body: Buffer, contentType = 'application/json') {
  const res = await fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': contentType, accept: 'application/json, text/event-stream' }, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const ORDER = '"order":{"amount":1000,"currency":"EUR"},';

/** A route of each kind: [name, server, path, fields before the one holding the bytes]. */
function routes(): Array<[string, TestService, string, string]> {
  return [
    ['REST through express', service, '/api/v1/customers', ''],
    ['hot path (validate)', service, '/api/v1/vouchers/UTF-1/validate', ORDER],
    ['hot path (redeem)', service, '/api/v1/vouchers/UTF-1/redemption', ORDER],
    ['hot route through express', viaExpress, '/api/v1/vouchers/UTF-1/redemption', ORDER],
    ['RPC', service, '/api/rpc/customers.create', ''],
    ['MCP', service, '/api/mcp', ''],
  ];
}

beforeAll(async () => {
  service = await startTestService();
  viaExpress = await startTestService({ database: service.db, hotPath: false });
  const { key: k, api } = await service.newWorkspace();
  key = k;
  await api.create('/api/v1/vouchers', { code: 'UTF-1', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } });
});
afterAll(async () => {
  await viaExpress?.close();
  await service?.close();
});

const count = async (table: string) => (await service.pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;

describe('invalid UTF-8', () => {
  it('is a 400 on every kind of route, and nothing is stored', async () => {
    const before = { customers: await count('customers'), redemptions: await count('redemptions') };
    for (const [kind, server, path, rest] of routes()) {
      for (const [name, bytes] of Object.entries(INVALID)) {
        const res = await post(server.baseUrl, path, bodyWith('name', bytes, rest));
        expect(res.status, `${kind}: ${name}`).toBe(400);
        expect(res.body, `${kind}: ${name}`).toMatchObject({ code: 'invalid_request', detail: 'the body is not valid UTF-8' });
      }
    }
    expect({ customers: await count('customers'), redemptions: await count('redemptions') }).toEqual(before);
  });

  it('keeps valid multi-byte text exactly as sent', async () => {
    const name = 'Zoë 😀 ✓ 東京';
    const created = await post(service.baseUrl, '/api/v1/customers', Buffer.from(JSON.stringify({ name })));
    expect(created.status).toBe(201);
    expect(created.body.name).toBe(name);
    const redeemed = await post(service.baseUrl, '/api/v1/vouchers/UTF-1/redemption', Buffer.from(JSON.stringify({ order: { amount: 1000, currency: 'EUR' }, metadata: { note: name } })));
    expect(redeemed.body.ok).toBe(true);
    const stored = await service.pool.query('SELECT metadata FROM redemptions WHERE id = $1', [redeemed.body.redemption.id]);
    expect(stored.rows[0].metadata).toEqual({ note: name });
  });
});

describe('a leading byte-order mark', () => {
  it('is dropped on every kind of route: the body reads as without it', async () => {
    const bodies: Record<string, string> = {
      'REST through express': '{"name":"bom"}',
      'hot path (validate)': `{${ORDER.slice(0, -1)}}`,
      'hot path (redeem)': `{${ORDER.slice(0, -1)}}`,
      'hot route through express': `{${ORDER.slice(0, -1)}}`,
      RPC: '{"name":"bom"}',
      MCP: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"customers_create","arguments":{"name":"bom"}}}',
    };
    for (const [kind, server, path] of routes()) {
      const res = await post(server.baseUrl, path, Buffer.concat([BOM, Buffer.from(bodies[kind]!)]));
      expect(res.status, `${kind}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
      if (kind === 'MCP') expect(res.body.result.structuredContent).toMatchObject({ name: 'bom' });
      else if (path.endsWith('/customers') || path.endsWith('customers.create')) expect(res.body.name).toBe('bom');
      else expect(res.body.valid ?? res.body.ok).toBe(true);
    }
  });

  it('is only dropped at the start: one inside the JSON text is not whitespace', async () => {
    for (const [kind, server, path] of routes()) {
      const res = await post(server.baseUrl, path, Buffer.concat([Buffer.from(' '), BOM, Buffer.from('{}')]));
      expect(res.status, kind).toBe(400);
      expect(res.body.detail, kind).toBe('the body is not valid JSON');
    }
  });
});

describe('the charset parameter', () => {
  it('takes utf-8 in any spelling and refuses any other charset with 415 on every kind of route', async () => {
    for (const [kind, server, path] of routes()) {
      for (const charset of ['latin1', 'iso-8859-1', 'utf-16', 'windows-1252']) {
        const res = await post(server.baseUrl, path, Buffer.from('{}'), `application/json; charset=${charset}`);
        expect(res.status, `${kind} ${charset}`).toBe(415);
        expect(res.body.code).toBe('unsupported_media_type');
      }
    }
    for (const charset of ['utf-8', 'UTF-8', '"utf-8"', 'utf8']) {
      const res = await post(service.baseUrl, '/api/v1/customers', Buffer.from('{"name":"é"}'), `application/json; charset=${charset}`);
      expect(res.status, charset).toBe(201);
      const hot = await post(service.baseUrl, '/api/v1/vouchers/UTF-1/validate', Buffer.from(`{${ORDER.slice(0, -1)}}`), `application/json; charset=${charset}`);
      expect(hot.body.valid, charset).toBe(true);
    }
  });
});
