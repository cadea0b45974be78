import { describe, expect, it } from 'vitest';
import { loadYaml, MAX_YAML_BYTES } from '../../../src/topology/yaml.js';

describe('loadYaml', () => {
  it('returns the data and maps key paths to lines and columns', () => {
    const text = 'name: a\ntopology:\n  services:\n    driver:\n      gpus: [4, 5, 6]\n';
    const y = loadYaml(text, 'a.yaml');
    expect(y.issues).toEqual([]);
    expect(y.value).toEqual({ name: 'a', topology: { services: { driver: { gpus: [4, 5, 6] } } } });
    expect(y.locate(['topology', 'services', 'driver', 'gpus', 2])).toEqual({ line: 5, column: 20 });
    expect(y.locate(['topology', 'services', 'driver', 'gpus'], { key: true })).toEqual({
      line: 5,
      column: 7,
    });
    // A block mapping value is pointed at by its key.
    expect(y.locate(['topology', 'services'])).toEqual({ line: 3, column: 3 });
    // A path that does not exist falls back to its deepest existing parent.
    expect(y.locate(['topology', 'runtime', 'nr_workers'])).toEqual({ line: 2, column: 1 });
    expect(y.has(['topology', 'services', 'driver'])).toBe(true);
    expect(y.has(['topology', 'runtime'])).toBe(false);
  });

  it('accepts a few aliases but refuses an alias bomb', () => {
    const ok = loadYaml('a: &g [0, 1]\nb: *g\nc: *g\n', 'ok.yaml');
    expect(ok.issues).toEqual([]);
    expect(ok.value).toEqual({ a: [0, 1], b: [0, 1], c: [0, 1] });
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const l of 'bcdefgh')
      levels.push(
        `${l}: &${l} [${Array(9)
          .fill(`*${String.fromCharCode(l.charCodeAt(0) - 1)}`)
          .join(', ')}]`,
      );
    const bomb = loadYaml(`${levels.join('\n')}\n`, 'bomb.yaml');
    expect(bomb.value).toBeUndefined();
    expect(bomb.issues.map((i) => i.rule)).toEqual(['alias-limit']);
  });

  it('refuses files over the size limit before parsing', () => {
    const big = `a: 1\n${'#'.repeat(MAX_YAML_BYTES)}\n`;
    const y = loadYaml(big, 'big.yaml');
    expect(y.issues).toMatchObject([{ rule: 'file-too-large', line: 1, file: 'big.yaml' }]);
  });

  it.each([
    ['', 'empty-file'],
    ['   \n\n', 'empty-file'],
    ['# only a comment\n', 'empty-file'],
    ['a: 1\n---\nb: 2\n', 'multi-document'],
    ['a: 1\na: 2\n', 'duplicate-key'],
    ['1: a\n', 'non-string-key'],
    ['? [a, b]\n: c\n', 'non-string-key'],
    ['a: [1, 2\n', 'yaml-syntax'],
    ['a: "unterminated\n', 'yaml-syntax'],
    ['a: 1\n\0', 'yaml-syntax'],
    ['a: !custom 1\n', 'yaml-syntax'],
  ])('refuses %j with %s, never throwing', (text, rule) => {
    const y = loadYaml(text, 'x.yaml');
    expect(y.value).toBeUndefined();
    expect(y.issues[0]?.rule).toBe(rule);
    expect(y.issues[0]?.severity).toBe('error');
  });

  it('reports an unclosed quote where it opens, not where the parser gave up (issue 41: line 3 was 7:20)', () => {
    const text = 'a: 1\nb: 2\nc: "abc\nd: 4\ne: 5\nf: 6\ng: 7\n';
    const y = loadYaml(text, 'q.yaml');
    expect(y.issues).toHaveLength(1);
    expect(y.issues[0]).toMatchObject({ rule: 'yaml-syntax', line: 3, column: 4, keyPath: 'c' });
    expect(y.issues[0]?.message).toContain('the quote opened here is never closed');
    expect(y.issues[0]?.message).toContain('the end of the file');
    const nested = loadYaml("topology:\n  driver: 'x\n  physics: 4\n", 'n.yaml');
    expect(nested.issues[0]).toMatchObject({ line: 2, column: 11, keyPath: 'topology.driver' });
  });

  it('reports a duplicate key at the second occurrence with its key path', () => {
    const y = loadYaml('topology:\n  runtime:\n    nr_workers: 1\n    nr_workers: 2\n', 'd.yaml');
    expect(y.issues[0]).toMatchObject({
      rule: 'duplicate-key',
      line: 4,
      keyPath: 'topology.runtime.nr_workers',
    });
    expect(y.issues[0]?.message).toContain('`nr_workers` appears twice');
  });
});

describe('loadYaml nesting', () => {
  it('refuses deep nesting without exhausting the stack', () => {
    const deep = loadYaml(`a: ${'['.repeat(40)}${']'.repeat(40)}\n`, 'deep.yaml');
    expect(deep.issues.map((i) => i.rule)).toEqual(['yaml-too-deep']);
    const hostile = loadYaml(`a: ${'{b: '.repeat(5000)}1${'}'.repeat(5000)}\n`, 'hostile.yaml');
    expect(hostile.issues[0]?.rule).toBe('yaml-too-deep');
    expect(loadYaml(`a: ${'['.repeat(20)}${']'.repeat(20)}\n`, 'ok.yaml').issues).toEqual([]);
  });
});
