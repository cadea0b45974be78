// Hardware profiles: every shipped profile validates; bad ones are refused with file, line and key.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listProfiles, loadProfile, parseProfile } from '../../../src/sim/profile.js';
import { root } from './helpers.js';

describe('twin profiles', () => {
  it('ships at least three hardware profiles and the fault profiles, all valid', () => {
    const names = listProfiles(root);
    for (const n of [
      'twin-balanced',
      'twin-renderer-bound',
      'twin-driver-bound',
      'twin-crash',
      'twin-host-oom',
      'twin-cyclic',
      'twin-silent',
    ]) {
      expect(names).toContain(n);
    }
    for (const n of names) expect(loadProfile(n, root).name).toBe(n);
  });

  it('refuses an unknown deploy with the known ones', () => {
    expect(() => loadProfile('twin-nope', root)).toThrow(/no twin profile .*known deploys: .*twin-balanced/);
    expect(() => loadProfile('../etc', root)).toThrow('not a twin profile name');
  });

  const dir = join(root, 'test/fixtures/sim/bad-profiles');
  const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Record<string, string[]>;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    it(`refuses ${file}`, () => {
      let message = '';
      try {
        parseProfile(readFileSync(join(dir, file), 'utf8'), file, root);
      } catch (e) {
        message = (e as Error).message;
      }
      for (const part of expected[file] ?? ['(no expectation)']) expect(message).toContain(part);
    });
  }
});
