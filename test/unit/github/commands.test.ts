import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS, helpText, parseCommand } from '../../../src/github/commands.js';
import { repoRoot } from '../../support/run-action.js';

const corpus = JSON.parse(readFileSync(join(repoRoot, 'test/fixtures/github/bad-commands.json'), 'utf8')) as {
  cases: { body: string; reason: string }[];
};

describe('parseCommand', () => {
  it.each([
    ['/topo submit', { kind: 'command', name: 'submit' }],
    ['  /topo   status  \n', { kind: 'command', name: 'status' }],
    ['/topo cancel\r\n', { kind: 'command', name: 'cancel' }],
    ['/topo help', { kind: 'command', name: 'help' }],
    ['/topo conclude', { kind: 'command', name: 'conclude' }],
    ['/topo stop', { kind: 'command', name: 'stop' }],
    ['/topo reject too slow on H100', { kind: 'command', name: 'reject', argument: 'too slow on H100' }],
    ['/topo submit more-workers', { kind: 'command', name: 'submit', argument: 'more-workers' }],
    ['/topo cancel b2', { kind: 'command', name: 'cancel', argument: 'b2' }],
    [
      '/topo learn driver is the bottleneck\nbeyond 4 replicas',
      { kind: 'command', name: 'learn', argument: 'driver is the bottleneck\nbeyond 4 replicas' },
    ],
  ])('accepts %j', (body, expected) => {
    expect(parseCommand(body)).toEqual(expected);
  });

  it.each([
    'hello',
    'I ran /topo submit yesterday',
    '> /topo submit\nquoted',
    '/topology submit',
    '',
    '/topos submit',
  ])('ignores a comment that is not a command: %j', (body) => {
    expect(parseCommand(body)).toEqual({ kind: 'none' });
  });

  it.each(corpus.cases)('answers the bad command $body with the reason', ({ body, reason }) => {
    expect(parseCommand(body)).toEqual({ kind: 'invalid', reason });
  });

  it.each([
    ['/topo', /no command/],
    ['/topo Submit', /unknown command `Submit`/],
    ['/topo submit now please', /takes at most one candidate name/],
    ['/topo cancel More-Workers', /takes at most one candidate name/],
    ['/topo stop a;b', /takes at most one candidate name/],
    ['/topo status now', /takes no arguments/],
    ['/topo submit; rm -rf /', /unknown command `submit;`/],
    ['/topo deploy', /unknown command `deploy`/],
    ['/topo reject', /needs a text/],
    ['/topo learn   ', /needs a text/],
    [`/topo learn ${'x'.repeat(2001)}`, /longer than 2000/],
    ['/topo $(id)', /unknown command/],
  ])('rejects %j', (body, reason) => {
    const parsed = parseCommand(body);
    expect(parsed.kind).toBe('invalid');
    expect(parsed.kind === 'invalid' && parsed.reason).toMatch(reason);
  });

  it('help lists every command and the reason when given', () => {
    const help = helpText('unknown command `deploy`');
    expect(help).toMatch(/^I did not understand that: unknown command `deploy`\./);
    for (const name of Object.keys(COMMANDS)) expect(help).toContain(`\`/topo ${name}`);
  });
});
