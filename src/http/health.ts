// /health (liveness) and /ready (named readiness checks, 503 naming the failing ones), also under /api/v1.
import { Router, type RequestHandler } from 'express';

export interface CheckResult {
  ok: boolean;
  detail?: string;
  [extra: string]: unknown;
}

export type ReadinessCheck = () => Promise<CheckResult>;

const CHECK_TIMEOUT_MS = 2_000;

async function runCheck(check: ReadinessCheck): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, detail: `no answer within ${CHECK_TIMEOUT_MS} ms` }), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([check().catch((e: unknown) => ({ ok: false, detail: (e as Error).message || String(e) })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(version: string, checks: Record<string, ReadinessCheck>): Router {
  const router = Router();
  const health: RequestHandler = (_req, res) => {
    res.json({ status: 'ok', version });
  };
  const ready: RequestHandler = async (_req, res) => {
    const names = Object.keys(checks);
    const results = await Promise.all(names.map((name) => runCheck(checks[name]!)));
    const report: Record<string, { status: 'ok' | 'failing' } & Omit<CheckResult, 'ok'>> = {};
    names.forEach((name, i) => {
      const { ok, ...rest } = results[i]!;
      report[name] = { status: ok ? 'ok' : 'failing', ...rest };
    });
    const failing = names.filter((_, i) => !results[i]!.ok);
    res.setHeader('Cache-Control', 'no-store');
    if (failing.length) res.status(503).json({ status: 'not_ready', failing, checks: report, version });
    else res.json({ status: 'ready', checks: report, version });
  };
  for (const prefix of ['', '/api/v1']) {
    router.get(`${prefix}/health`, health);
    router.get(`${prefix}/ready`, ready);
  }
  return router;
}
