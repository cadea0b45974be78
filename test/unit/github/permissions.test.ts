import { describe, expect, it } from 'vitest';
import { decideCommandAllowed } from '../../../src/github/permissions.js';

const same = { headRepoFullName: 'acme/sim', baseRepoFullName: 'acme/sim', state: 'open' };
const base = { commenter: 'alice', command: 'submit', repository: 'acme/sim', pull: same };

describe('decideCommandAllowed', () => {
  it.each([
    ['admin', 'admin'],
    ['write', 'maintain'],
    ['write', 'write'],
  ])('allows permission %s (role %s) on a same-repository pull request', (permission, roleName) => {
    expect(decideCommandAllowed({ ...base, permission, roleName })).toEqual({
      allowed: true,
      permission: roleName,
    });
  });

  it.each([
    ['read', 'read'],
    ['read', 'triage'],
    ['none', undefined],
  ])('refuses permission %s (role %s) and says why', (permission, roleName) => {
    const d = decideCommandAllowed({ ...base, permission, roleName });
    expect(d.allowed).toBe(false);
    expect(!d.allowed && d.reason).toMatch(/^Sorry @alice, `\/topo submit` needs write access to acme\/sim/);
  });

  it('refuses a fork pull request even for an admin', () => {
    const d = decideCommandAllowed({
      ...base,
      permission: 'admin',
      pull: { ...same, headRepoFullName: 'mallory/sim' },
    });
    expect(d.allowed).toBe(false);
    expect(!d.allowed && d.reason).toMatch(/forks/);
  });

  it('refuses when the fork was deleted (head repository null)', () => {
    const d = decideCommandAllowed({
      ...base,
      permission: 'write',
      pull: { ...same, headRepoFullName: null },
    });
    expect(d.allowed).toBe(false);
  });
});
