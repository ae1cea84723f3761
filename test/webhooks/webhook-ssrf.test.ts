// Private targets are refused unless WEBHOOK_ALLOW_PRIVATE_TARGETS: at creation (IP literals and names, after DNS
// resolution) and again at delivery, on the addresses the socket would use, so a name that later points inside is
// still refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPrivateAddress, refuseTarget } from '../../src/domains/webhooks/webhook-target.js';
import { startReceiver, type Receiver } from './receiver.js';
import { createEndpoint, deliveryWhen, recordCustomerEvent, startWebhookHarness, type WebhookHarness } from './support.js';

let harness: WebhookHarness;
let rx: Receiver;
beforeAll(async () => {
  // The worker refuses private targets (the default); the API's setting is switched per test below.
  harness = await startWebhookHarness({ allowPrivateTargets: false });
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await harness?.close();
});

describe('private addresses', () => {
  it('classifies loopback, private, link-local, mapped and special ranges as private, public ones as public', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '224.0.0.1']) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '1.1.1.1']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });

  it('judges IPv6 forms that carry an IPv4 address by that address, and refuses the reserved IPv6 ranges', () => {
    const refused = [
      '::127.0.0.1', '::7f00:1', '::8.8.8.8', // IPv4-compatible (deprecated): the whole ::/96
      '::ffff:7f00:1', '::ffff:169.254.169.254', '::ffff:0:7f00:1', // IPv4-mapped, IPv4-translated
      '64:ff9b::7f00:1', '64:ff9b::10.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b:1::8.8.8.8', // NAT64 of a private IPv4, local-use NAT64
      '2002:7f00:1::1', '2002:a00:1::', '2002:c0a8:101::1', '2002:a9fe:a9fe::1', // 6to4 of a private IPv4
      '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:2::1', '2001:10::1', // Teredo, benchmarking, ORCHID
      '2001:db8::1', '3fff::1', '100::1', 'fec0::1', 'fe80::1%eth0', 'ff02::1', '5f00::1', // documentation, discard, site-local, scoped
      'not an address',
    ];
    for (const address of refused) expect(isPrivateAddress(address), address).toBe(true);
    for (const address of ['::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1', '2a00:1450:4001:81c::200e']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });

  it('allows everything http(s) when private targets are allowed, and never credentials or other schemes', async () => {
    expect(await refuseTarget('http://127.0.0.1:1/x', true)).toBeUndefined();
    expect(await refuseTarget('ftp://127.0.0.1/x', true)).toMatch(/http/);
    expect(await refuseTarget('http://u:p@127.0.0.1/x', true)).toMatch(/credentials/);
  });
});

describe('at creation', () => {
  it('refuses private, loopback and link-local targets, literal or resolved by name, with 400', async () => {
    harness.service.service.settings.webhooks = { ...harness.settings, allowPrivateTargets: false };
    const { api } = await harness.service.newWorkspace();
    for (const url of [
      rx.url,
      `http://localhost:${rx.port}/hooks`,
      'http://10.0.0.8/hooks',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]:8080/',
      'http://[::ffff:7f00:1]/',
      'https://192.168.0.10/',
      'http://0.0.0.0:3000/',
      'http://[::127.0.0.1]/',
      'http://[::7f00:1]:8080/',
      'http://[::ffff:0:7f00:1]/',
      'http://[64:ff9b::127.0.0.1]/',
      'http://[64:ff9b::169.254.169.254]/latest/meta-data',
      'http://[2002:7f00:1::1]/',
      'http://[2002:a00:8::]/',
      'http://[fec0::1]/',
      'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
      'http://0x7f.1/',
      'http://2130706433/',
    ]) {
      const res = await api.post('/api/v1/webhooks', { url, events: '*' });
      expect(res.status, url).toBe(400);
      expect(res.body.errors, url).toEqual([{ path: 'url', message: expect.stringMatching(/private, loopback or link-local/) }]);
    }
    const localhost = await api.post('/api/v1/webhooks', { url: `http://localhost:${rx.port}/hooks`, events: '*' });
    expect(localhost.body.detail).toContain('resolves to');
    expect((await api.get('/api/v1/webhooks')).body.data).toEqual([]);
  });
});

describe('at delivery', () => {
  it('refuses to connect to a private address after resolving the name, and retries on the schedule', async () => {
    // Created while the API allowed it (as if its DNS answer changed afterwards); the worker does not.
    harness.service.service.settings.webhooks = { ...harness.settings, allowPrivateTargets: true };
    const { api } = await harness.service.newWorkspace();
    const byName = await createEndpoint(api, { url: `http://localhost:${rx.port}/hooks`, events: '*' });
    const byAddress = await createEndpoint(api, { url: rx.url, events: '*' });
    const { event } = await recordCustomerEvent(api);

    const named = await deliveryWhen(api, byName.id, event.id, (d) => d.attempts === 1);
    expect(named).toMatchObject({ status: 'retry_scheduled', responseStatus: null });
    expect(named.error).toMatch(/localhost resolves to a private, loopback or link-local address/);
    const literal = await deliveryWhen(api, byAddress.id, event.id, (d) => d.attempts === 1);
    expect(literal.error).toMatch(/refused: 127\.0\.0\.1 is a private, loopback or link-local address/);
    expect(rx.requests).toHaveLength(0);
  });
});
