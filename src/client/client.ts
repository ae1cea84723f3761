// The client library: every operation over RPC by name, typed by an operation map (from the zod schemas in this
// repository, generated for the published package); safe retries, time-outs, list iteration, typed errors and the
// version handshake. Imports nothing outside src/client, so the client package is compiled from it as it is.
import { ApiError, ConnectionError, PromotionsError, TimeoutError, VersionMismatchError, type ProblemDetails } from './errors.js';
import type { GroupIn, InputArgsIn, InputIn, ItemIn, ListNameIn, NameIn, OperationMap, OutputIn } from './operation-map.js';
import { CLIENT_VERSION, CLIENT_VERSION_HEADER } from './version.js';

/** What the client needs to know of an operation at run time (the registry's operations have these fields). */
export interface OperationInfo {
  readonly name: string;
  readonly method: string;
  readonly scope: string;
  readonly idempotent?: boolean | undefined;
}

export interface ClientOptions {
  /** The service, e.g. `https://promotions.example.com` (no /api suffix). */
  baseUrl: string;
  /** `service_<prefix>_<secret>`. Never ship it to a browser. */
  apiKey?: string | undefined;
  /** Per attempt; default 30 s. */
  timeoutMs?: number | undefined;
  /** Retries of retry-safe calls (reads and idempotent operations); default 2. */
  maxRetries?: number | undefined;
  /** Longest wait between attempts; default 8 s. */
  maxRetryDelayMs?: number | undefined;
  /** An apiKey where `window` exists is refused unless you say this code runs on a server (or you accept the risk). */
  dangerouslyAllowBrowser?: boolean | undefined;
  fetch?: typeof fetch | undefined;
  headers?: Record<string, string> | undefined;
  /** Operations not in this package's table (a newer server), callable by name; see call(). */
  extraOperations?: readonly OperationInfo[] | undefined;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /** For idempotent operations: the key of this logical call (default: a new UUID, reused on every retry). */
  idempotencyKey?: string | undefined;
  maxRetries?: number | undefined;
}

export interface BatchCall {
  operation: string;
  input?: Record<string, unknown> | undefined;
  idempotencyKey?: string | undefined;
}

export type BatchOutcome = { ok: true; status: number; output: unknown } | { ok: false; status: number; error: ApiError };

export interface ServerDescription {
  version: string;
  workspaceId: string;
  scopes: string[];
  operations: Array<{ name: string; method: string; scope: string; summary: string; idempotent: boolean }>;
}

type Namespaces<Api extends OperationMap<Api>> = {
  [G in GroupIn<Api>]: {
    [N in NameIn<Api> as N extends `${G}.${infer V}` ? V : never]: (
      ...args: [...InputArgsIn<Api, N>, options?: CallOptions]
    ) => Promise<OutputIn<Api, N>>;
  };
};

export interface ClientCore<Api extends OperationMap<Api>> {
  readonly version: string;
  readonly baseUrl: string;
  /** Typed call by operation name. */
  call<N extends NameIn<Api>>(name: N, ...args: [...InputArgsIn<Api, N>, options?: CallOptions]): Promise<OutputIn<Api, N>>;
  /** Untyped call by name, for operations this client's table does not know. */
  call(name: string, input?: Record<string, unknown>, options?: CallOptions): Promise<unknown>;
  /** Every item of a list operation, page after page (follows `next`). */
  list<N extends ListNameIn<Api>>(name: N, input?: InputIn<Api, N>, options?: CallOptions): AsyncGenerator<ItemIn<Api, N>>;
  list(name: string, input?: Record<string, unknown>, options?: CallOptions): AsyncGenerator<unknown>;
  /** The pages of a list operation. */
  pages<N extends ListNameIn<Api>>(name: N, input?: InputIn<Api, N>, options?: CallOptions): AsyncGenerator<OutputIn<Api, N>>;
  pages(name: string, input?: Record<string, unknown>, options?: CallOptions): AsyncGenerator<{ data: unknown[]; next?: string }>;
  /**
   * Many calls in one request (at most 1000), answered in order, each with its own outcome: a failed call does not
   * stop the others, and nothing is atomic across calls. Retried only when every call is retry-safe.
   */
  batch(calls: readonly BatchCall[], options?: CallOptions): Promise<BatchOutcome[]>;
  /** The server's version, this key's scopes and the operations it may call. */
  describe(options?: CallOptions): Promise<ServerDescription>;
  /** The server's version from /health (no key needed). */
  serverVersion(options?: CallOptions): Promise<string>;
}

export type ClientFor<Api extends OperationMap<Api>> = ClientCore<Api> & Namespaces<Api>;

const RETRY_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);
const RESERVED: ReadonlySet<string> = new Set(['version', 'baseUrl', 'call', 'list', 'pages', 'batch', 'describe', 'serverVersion']);

/** Reads (GET, or a POST needing only a read scope, such as vouchers.validate) and operations taking an idempotency key. */
function isRetrySafe(operation: OperationInfo | undefined): boolean {
  return operation !== undefined && (operation.method === 'get' || operation.scope.endsWith(':read') || Boolean(operation.idempotent));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

function isProblem(value: unknown): value is ProblemDetails {
  return typeof value === 'object' && value !== null && typeof (value as ProblemDetails).code === 'string';
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A client for the operations of `table`, typed by `Api` (the entry points bind both: index.ts here, the package's). */
export function createClientFor<Api extends OperationMap<Api>>(table: readonly OperationInfo[], options: ClientOptions): ClientFor<Api> {
  if (options.apiKey && typeof (globalThis as { window?: unknown }).window !== 'undefined' && !options.dangerouslyAllowBrowser) {
    throw new PromotionsError(
      'refusing to use an API key in a browser: anyone can read it there. Call the service from your server, or pass ' +
        '{ dangerouslyAllowBrowser: true } if this code really runs on a server.',
    );
  }
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const known = new Map<string, OperationInfo>([...table, ...(options.extraOperations ?? [])].map((op) => [op.name, op]));
  const baseHeaders: Record<string, string> = {
    accept: 'application/json',
    [CLIENT_VERSION_HEADER]: CLIENT_VERSION,
    ...options.headers,
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
  };

  async function attempt(method: string, path: string, label: string, body: string | undefined, headers: Record<string, string>, call: CallOptions) {
    const timeoutMs = call.timeoutMs ?? options.timeoutMs ?? 30_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await doFetch(baseUrl + path, { method, headers, ...(body !== undefined ? { body } : {}), signal });
    } catch (error) {
      if (call.signal?.aborted) throw call.signal.reason;
      if (timeout.aborted) throw new TimeoutError(`${label}: no answer within ${timeoutMs} ms`, { cause: error });
      throw new ConnectionError(`${label}: cannot reach ${baseUrl} (${(error as Error).message})`, { cause: error });
    }
    const parsed = await readBody(res).catch((error: unknown) => {
      if (timeout.aborted) throw new TimeoutError(`${label}: no complete answer within ${timeoutMs} ms`, { cause: error });
      throw new ConnectionError(`${label}: the answer was cut off`, { cause: error });
    });
    if (res.ok) return { ok: true as const, body: parsed, res };
    const problem: ProblemDetails = isProblem(parsed)
      ? parsed
      : { status: res.status, code: 'http_error', detail: typeof parsed === 'string' ? parsed.slice(0, 500) : res.statusText };
    const retryAfter = Number(res.headers.get('retry-after') ?? NaN);
    const meta = { requestId: res.headers.get('x-request-id') ?? undefined, retryAfter: Number.isFinite(retryAfter) ? retryAfter : undefined };
    const ErrorType = problem.code === 'version_mismatch' ? VersionMismatchError : ApiError;
    return { ok: false as const, error: new ErrorType(label, { ...problem, status: res.status }, meta), res };
  }

  async function request(method: string, path: string, label: string, input: unknown, call: CallOptions, retrySafe: boolean, extraHeaders: Record<string, string>) {
    const headers = { ...baseHeaders, ...extraHeaders, ...(input !== undefined ? { 'content-type': 'application/json' } : {}) };
    const body = input !== undefined ? JSON.stringify(input) : undefined;
    const maxRetries = retrySafe ? (call.maxRetries ?? options.maxRetries ?? 2) : 0;
    for (let retry = 0; ; retry++) {
      let failure: unknown;
      try {
        const outcome = await attempt(method, path, label, body, headers, call);
        if (outcome.ok) return outcome.body;
        failure = outcome.error;
        // On a retry the body is the same as before, so idempotency_conflict can only mean that the first attempt
        // is still running: wait for its outcome.
        const stillRunning = retry > 0 && outcome.error.code === 'idempotency_conflict';
        if (!RETRY_STATUSES.has(outcome.res.status) && !stillRunning) throw failure;
      } catch (error) {
        if (!(error instanceof ConnectionError || error instanceof TimeoutError)) throw error;
        failure = error;
      }
      if (retry >= maxRetries) throw failure;
      const hinted = failure instanceof ApiError && failure.retryAfter !== undefined ? failure.retryAfter * 1000 : undefined;
      const backoff = Math.random() * 250 * 2 ** retry;
      await sleep(Math.min(hinted ?? backoff, options.maxRetryDelayMs ?? 8_000), call.signal);
    }
  }

  async function call(name: string, input?: Record<string, unknown>, callOptions: CallOptions = {}): Promise<unknown> {
    const operation = known.get(name);
    const headers: Record<string, string> = {};
    // One key per logical call, sent on every attempt, so a retried redemption is replayed, never repeated.
    if (operation?.idempotent) {
      const given = callOptions.idempotencyKey ?? (input?.['idempotencyKey'] as string | undefined);
      headers['idempotency-key'] = given ?? globalThis.crypto.randomUUID();
    }
    return request('POST', `/api/rpc/${encodeURIComponent(name)}`, name, input ?? {}, callOptions, isRetrySafe(operation), headers);
  }

  async function batch(calls: readonly BatchCall[], callOptions: CallOptions = {}): Promise<BatchOutcome[]> {
    const sent = calls.map((c) => {
      const operation = known.get(c.operation);
      const key = operation?.idempotent ? (c.idempotencyKey ?? (c.input?.['idempotencyKey'] as string | undefined) ?? globalThis.crypto.randomUUID()) : c.idempotencyKey;
      return { operation: c.operation, ...(c.input ? { input: c.input } : {}), ...(key ? { idempotencyKey: key } : {}) };
    });
    const retrySafe = calls.every((c) => isRetrySafe(known.get(c.operation)));
    const answer = (await request('POST', '/api/rpc', 'batch', { calls: sent }, callOptions, retrySafe, {})) as {
      results: Array<{ status: number; output?: unknown; problem?: ProblemDetails }>;
    };
    return answer.results.map((r, i) =>
      r.problem
        ? { ok: false as const, status: r.status, error: new (r.problem.code === 'version_mismatch' ? VersionMismatchError : ApiError)(sent[i]!.operation, r.problem) }
        : { ok: true as const, status: r.status, output: r.output },
    );
  }

  async function* pages(name: string, input: Record<string, unknown> = {}, callOptions?: CallOptions) {
    let cursor = input['cursor'] as string | undefined;
    do {
      const page = (await call(name, { ...input, ...(cursor ? { cursor } : {}) }, callOptions)) as { data: unknown[]; next?: string };
      yield page;
      cursor = page.next;
    } while (cursor);
  }

  async function* list(name: string, input?: Record<string, unknown>, callOptions?: CallOptions) {
    for await (const page of pages(name, input, callOptions)) yield* page.data;
  }

  const core = {
    version: CLIENT_VERSION,
    baseUrl,
    call: (name: string, ...args: unknown[]) => {
      const [input, callOptions] = args as [Record<string, unknown> | undefined, CallOptions | undefined];
      return call(name, input, callOptions);
    },
    list,
    pages,
    batch,
    describe: (callOptions: CallOptions = {}) => request('GET', '/api/rpc', 'describe', undefined, callOptions, true, {}),
    serverVersion: async (callOptions: CallOptions = {}) =>
      ((await request('GET', '/health', 'health', undefined, callOptions, true, {})) as { version: string }).version,
  } as Record<string, unknown>;

  for (const name of known.keys()) {
    const [group, verb] = name.split('.') as [string, string];
    if (RESERVED.has(group)) continue;
    const namespace = (core[group] ??= {}) as Record<string, unknown>;
    namespace[verb] = (input?: Record<string, unknown>, callOptions?: CallOptions) => call(name, input, callOptions);
  }
  return core as unknown as ClientFor<Api>;
}


