// Failures reaching a service are told apart by their cause, before any status: octokit reports a
// DNS failure as a RequestError with status 500 whose cause says ENOTFOUND.
import { describe, expect, it } from 'vitest';
import { classifyRequestError, networkFix } from '../../../src/doctor/network.js';

function octokitNetworkError(code: string, message: string) {
  const root = Object.assign(new Error(message), { code });
  const fetchError = Object.assign(new TypeError('fetch failed'), { cause: root });
  return Object.assign(new Error(message), { name: 'HttpError', status: 500, cause: fetchError });
}

const httpError = (status: number, headers: Record<string, string> = {}, message = 'x') =>
  Object.assign(new Error(message), { name: 'HttpError', status, response: { headers } });

describe('classifyRequestError', () => {
  it.each([
    ['ENOTFOUND', 'dns'],
    ['EAI_AGAIN', 'dns'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls'],
    ['CERT_HAS_EXPIRED', 'tls'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'tls'],
    ['ECONNREFUSED', 'connection'],
    ['ETIMEDOUT', 'timeout'],
  ])('%s behind an HTTP 500 is %s', (code, kind) => {
    const f = classifyRequestError(octokitNetworkError(code, `getaddrinfo ${code} api.github.com`));
    expect(f).toMatchObject({ kind, code });
    expect(f.status).toBeUndefined();
  });

  it('reads statuses only when the service answered', () => {
    expect(classifyRequestError(httpError(401)).kind).toBe('auth');
    expect(classifyRequestError(httpError(403)).kind).toBe('permission');
    expect(classifyRequestError(httpError(403, { 'x-ratelimit-remaining': '0' })).kind).toBe('rate-limited');
    expect(classifyRequestError(httpError(404)).kind).toBe('not-found');
    expect(classifyRequestError(httpError(502)).kind).toBe('server');
  });

  it('gives a network fix only for network failures', () => {
    const dns = classifyRequestError(
      octokitNetworkError('ENOTFOUND', 'getaddrinfo ENOTFOUND api.github.com'),
    );
    expect(networkFix(dns, 'api.github.com', 'GITHUB_API_URL')).toContain('cannot resolve api.github.com');
    expect(
      networkFix(classifyRequestError(httpError(401)), 'api.github.com', 'GITHUB_API_URL'),
    ).toBeUndefined();
  });
});
