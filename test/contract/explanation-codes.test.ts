// Every explanation code the service can answer is a value of the served document's one ExplanationCode enum: the
// closed list itself, every code literal the source hands to a refusal, and the loyalty and reward refusals answered live.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPLANATION_CODES, explanationMessage } from '../../src/contract/outcomes.js';
import { projectRoot } from '../../src/platform/paths.js';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let served: string[];
beforeAll(async () => {
  service = await startTestService();
  const document = (await (await fetch(`${service.baseUrl}/api/openapi.json`)).json()) as any;
  served = document.components.schemas.ExplanationCode.enum;
});
afterAll(async () => service?.close());

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? sourceFiles(file) : file.endsWith('.ts') ? [file] : [];
  });
}

/**
 * Code literals handed to a refusal: `refusal('x')`, `refuse('x')`, `messageOf('x')`, or an outcome written out
 * (`ok|valid: false, code: 'x', message`). Problem codes (`currency_required`, import rejections) are not outcomes.
 */
function refusalLiterals(): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [/\b(?:refusal|refuse|refuseWrite|messageOf|explanationMessage)\(\s*'([a-z_]+)'/g, /\b(?:ok|valid): false, code: '([a-z_]+)', message/g];
  for (const file of sourceFiles(path.join(projectRoot, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of patterns) for (const m of text.matchAll(pattern)) found.set(m[1]!, path.relative(projectRoot, file));
  }
  return found;
}

const codesOf = (body: any): string[] => [body.code, ...(body.explanations ?? []).map((e: { code: string }) => e.code)];

/** Answers the seven loyalty and reward refusals through HTTP; each answer's codes. */
async function loyaltyAndRewardRefusals(api: ApiClient): Promise<Record<string, string[]>> {
  const program = await api.create('/api/v1/campaigns', { name: 'Club', type: 'LOYALTY_PROGRAM', loyalty: {} });
  const member = await api.create(`/api/v1/loyalty/programs/${program.id}/members`, { customer: { sourceId: 'ada' } });
  const offered = async (reward: Record<string, unknown>) => {
    const made = await api.create('/api/v1/rewards', { type: 'MATERIAL', ...reward });
    expect((await api.post(`/api/v1/loyalty/programs/${program.id}/rewards`, { rewardId: made.id, points: 1 })).status).toBeLessThan(300);
    return made.id as string;
  };
  const redeem = async (rewardId: string) => (await api.post(`/api/v1/loyalty/members/${member.id}/reward-redemptions`, { rewardId })).body;
  const points = async (n: number) => (await api.post(`/api/v1/loyalty/members/${member.id}/points`, { points: n })).body;

  const answers: Record<string, any> = {};
  answers.loyalty_pay_with_points_disabled = (await api.post(`/api/v1/vouchers/${member.code}/validate`, { order: { amount: 1_000, currency: 'EUR' } })).body;
  answers.loyalty_points_insufficient = await points(-5);
  expect((await points(10)).ok).toBe(true);
  answers.reward_not_found = await redeem('00000000-0000-4000-8000-000000000000');
  answers.reward_inactive = await redeem(await offered({ name: 'Retired mug', active: false }));
  answers.reward_out_of_stock = await redeem(await offered({ name: 'Sold-out mug', stock: 0 }));
  const once = await offered({ name: 'One per member', limitPerMember: 1 });
  expect((await redeem(once)).ok).toBe(true);
  answers.reward_limit_reached = await redeem(once);
  expect((await api.post(`/api/v1/vouchers/${member.code}/disable`, {})).status).toBe(200);
  answers.loyalty_member_inactive = await points(-1);
  return Object.fromEntries(Object.entries(answers).map(([code, body]) => [code, codesOf(body)]));
}

describe('explanation codes in the served OpenAPI document', () => {
  it('serves the closed list exactly, each code with a message', () => {
    expect(served).toEqual(EXPLANATION_CODES);
    for (const code of EXPLANATION_CODES) expect(explanationMessage(code), code).toMatch(/\.$/);
    expect(served).toEqual(
      expect.arrayContaining([
        'loyalty_points_insufficient',
        'loyalty_member_inactive',
        'loyalty_pay_with_points_disabled',
        'reward_not_found',
        'reward_inactive',
        'reward_out_of_stock',
        'reward_limit_reached',
      ]),
    );
  });

  it('holds every code literal the source hands to a refusal', () => {
    const literals = refusalLiterals();
    expect(literals.size).toBeGreaterThan(30);
    const missing = [...literals].filter(([code]) => !served.includes(code)).map(([code, file]) => `${code} (${file})`);
    expect(missing).toEqual([]);
  });

  it('holds every code of the loyalty and reward refusals answered over HTTP', async () => {
    const { api } = await service.newWorkspace();
    const answered = await loyaltyAndRewardRefusals(api);
    for (const [expected, codes] of Object.entries(answered)) {
      expect(codes[0], expected).toBe(expected);
      for (const code of codes) expect(served, `${expected}: ${code}`).toContain(code);
    }
  });
});
