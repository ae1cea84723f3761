// A thin fetch wrapper for tests: JSON in, { status, headers, body } out, Authorization from the key.
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface ApiClient {
  key: string | undefined;
  request<T = any>(method: string, path: string, options?: { body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<ApiResponse<T>>;
  get<T = any>(path: string): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  patch<T = any>(path: string, body?: unknown): Promise<ApiResponse<T>>;
  delete<T = any>(path: string): Promise<ApiResponse<T>>;
  /** POST that must answer 201: the created resource, or an error carrying the answer. */
  create<T = Record<string, any>>(path: string, body: unknown): Promise<T>;
}

export function apiClient(baseUrl: string, key?: string): ApiClient {
  const request: ApiClient['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...(key ? { authorization: `Bearer ${key}` } : {}), ...options.headers };
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, headers: res.headers, body: parsed as never };
  };
  return {
    key,
    request,
    get: (path) => request('GET', path),
    post: (path, body, headers) => request('POST', path, { body, ...(headers ? { headers } : {}) }),
    async create(path, body) {
      const res = await request('POST', path, { body });
      if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body;
    },
    patch: (path, body) => request('PATCH', path, { body }),
    delete: (path) => request('DELETE', path),
  };
}

/**
 * What a client does with a 503 (it carries Retry-After: a partition moving, leases that lapsed on a starved machine
 * or while PostgreSQL restarted): sends the same request again after the wait, for at most `withinMs`. The answer,
 * with the 503s met before it (for a test's failure message). Only for requests that are safe to send again: reads,
 * and writes under an Idempotency-Key or a session key.
 */
export async function retryingUnavailable<R extends { status: number; headers: Headers }>(
  send: () => Promise<R>,
  show: (answer: R) => Promise<string> | string,
  withinMs = 15_000,
): Promise<R & { unavailable: string[] }> {
  const unavailable: string[] = [];
  const until = Date.now() + withinMs;
  for (;;) {
    const answer = await send();
    if (answer.status !== 503 || Date.now() >= until) return Object.assign(answer, { unavailable });
    unavailable.push(await show(answer));
    await new Promise((resolve) => setTimeout(resolve, 1_000 * Number(answer.headers.get('retry-after') ?? 1)));
  }
}
