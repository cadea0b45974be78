// Why a request to a service failed, told apart the way a person fixes it: the name does not
// resolve (DNS), the certificate is not trusted (TLS), nothing listens or a firewall drops it
// (connection), it took too long (timeout), the token is refused (auth, 401), the token may not do
// this (permission, 403), the thing is not there or not visible to the token (not found, 404), or
// the service itself failed (server, 5xx). Octokit reports a network failure as "HTTP 500": the
// cause chain says what really happened, so it is read before any status. Pure.

export type FailureKind =
  | 'dns'
  | 'tls'
  | 'connection'
  | 'timeout'
  | 'auth'
  | 'permission'
  | 'rate-limited'
  | 'not-found'
  | 'server'
  | 'unknown';

export interface RequestFailure {
  kind: FailureKind;
  /** HTTP status when the service answered. */
  status?: number;
  /** The deepest error message (getaddrinfo ENOTFOUND api.github.com, …). */
  message: string;
  /** The error code of the cause (ENOTFOUND, CERT_HAS_EXPIRED, …). */
  code?: string;
}

const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);
const CONNECTION = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
]);
const TIMEOUT = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT']);
const TLS =
  /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_OSSL_)/;

interface ErrorLike {
  name?: string;
  message?: string;
  code?: unknown;
  status?: unknown;
  cause?: unknown;
  errors?: unknown;
  response?: { headers?: Record<string, string | undefined> };
}

/** The error, its causes and (for AggregateError) its members, outermost first. */
function chain(error: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  const queue: unknown[] = [error];
  while (queue.length && out.length < 20) {
    const e = queue.shift();
    if (!e || typeof e !== 'object') continue;
    const x = e as ErrorLike;
    out.push(x);
    if (x.cause) queue.push(x.cause);
    if (Array.isArray(x.errors)) queue.push(...x.errors);
  }
  return out;
}

export function classifyRequestError(error: unknown): RequestFailure {
  const all = chain(error);
  const deepest = all.at(-1);
  const message = String(deepest?.message || (error as Error)?.message || error);
  for (const e of all) {
    const code = typeof e.code === 'string' ? e.code : undefined;
    if (!code) continue;
    if (DNS.has(code)) return { kind: 'dns', code, message };
    if (TLS.test(code)) return { kind: 'tls', code, message };
    if (TIMEOUT.has(code)) return { kind: 'timeout', code, message };
    if (CONNECTION.has(code)) return { kind: 'connection', code, message };
  }
  if (all.some((e) => e.name === 'TimeoutError' || e.name === 'AbortError'))
    return { kind: 'timeout', message };
  // Only now the status: a network failure is reported by octokit as a 500 with a cause.
  const networkLike = all.some((e) => e.name === 'TypeError' && /fetch failed/.test(e.message ?? ''));
  const status = all.map((e) => e.status).find((s): s is number => typeof s === 'number');
  if (status === undefined || networkLike) return { kind: networkLike ? 'connection' : 'unknown', message };
  const headers = all.find((e) => e.response?.headers)?.response?.headers ?? {};
  if (status === 401) return { kind: 'auth', status, message };
  if (
    (status === 403 || status === 429) &&
    (headers['x-ratelimit-remaining'] === '0' || /rate limit/i.test(message))
  )
    return { kind: 'rate-limited', status, message };
  if (status === 403) return { kind: 'permission', status, message };
  if (status === 404) return { kind: 'not-found', status, message };
  if (status >= 500) return { kind: 'server', status, message };
  return { kind: 'unknown', status, message };
}

/** One line for a check's detail: what failed, in words, and the underlying message. */
export function describeFailure(what: string, f: RequestFailure): string {
  const how: Record<FailureKind, string> = {
    dns: 'the host name does not resolve (DNS)',
    tls: 'the TLS certificate is not trusted',
    connection: 'the connection failed',
    timeout: 'no answer in time',
    auth: 'the credentials were refused (HTTP 401)',
    permission: 'not allowed (HTTP 403)',
    'rate-limited': `rate limited (HTTP ${f.status})`,
    'not-found': 'not found (HTTP 404)',
    server: `the service failed (HTTP ${f.status})`,
    unknown: f.status ? `HTTP ${f.status}` : 'failed',
  };
  return `${what}: ${how[f.kind]}${f.code ? ` [${f.code}]` : ''}: ${f.message}`;
}

/** The fix for reaching `host` (a URL's host) when the failure is on the network's side. */
export function networkFix(f: RequestFailure, host: string, setting: string): string | undefined {
  switch (f.kind) {
    case 'dns':
      return `this host cannot resolve ${host}: check its DNS (resolv.conf, a proxy) and ${setting}`;
    case 'tls':
      return `the certificate ${host} presents is not trusted here: behind a TLS-inspecting proxy give Node its CA (NODE_EXTRA_CA_CERTS=<ca.pem>); check the clock and ${setting}`;
    case 'connection':
      return `nothing answers at ${host} from this host: check ${setting}, that the service runs, and the firewall or proxy between them`;
    case 'timeout':
      return `${host} did not answer in time: check the firewall or proxy between this host and it, and that the service is not overloaded`;
    default:
      return undefined;
  }
}
