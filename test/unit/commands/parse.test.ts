// The one parser of `/topo` comments over the registry: a pull request's commands and a dashboard's
// controls, each taken only where it is given; bad commands are answered with a reason (the corpus).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helpText } from '../../../src/commands/help.js';
import { type Parsed, parseCommand } from '../../../src/commands/parse.js';
import { COMMANDS } from '../../../src/commands/registry.js';
import { repoRoot } from '../../support/run-action.js';

const corpus = JSON.parse(readFileSync(join(repoRoot, 'test/fixtures/github/bad-commands.json'), 'utf8')) as {
  cases: { body: string; reason: string }[];
};

/** The parse with the command as its name (what the tests compare). */
const parse = (body: string, where: 'pull' | 'dashboard' = 'pull') => {
  const p: Parsed = parseCommand(body, where, COMMANDS);
  return p.kind === 'command'
    ? { kind: p.kind, name: p.command.name, ...(p.argument ? { argument: p.argument } : {}) }
    : p;
};

describe('parseCommand on a pull request', () => {
  it.each([
    ['/topo submit', { kind: 'command', name: 'submit' }],
    ['  /topo   status  \n', { kind: 'command', name: 'status' }],
    ['/topo cancel\r\n', { kind: 'command', name: 'cancel' }],
    ['/topo help', { kind: 'command', name: 'help' }],
    ['/topo report', { kind: 'command', name: 'report' }],
    ['/topo stop', { kind: 'command', name: 'stop' }],
    ['/topo state rebuild', { kind: 'command', name: 'state', argument: 'rebuild' }],
    ['/topo reject too slow on H100', { kind: 'command', name: 'reject', argument: 'too slow on H100' }],
    ['/topo submit more-workers', { kind: 'command', name: 'submit', argument: 'more-workers' }],
    ['/topo cancel b2', { kind: 'command', name: 'cancel', argument: 'b2' }],
    [
      '/topo learn driver is the bottleneck\nbeyond 4 replicas',
      { kind: 'command', name: 'learn', argument: 'driver is the bottleneck\nbeyond 4 replicas' },
    ],
  ])('accepts %j', (body, expected) => {
    expect(parse(body)).toEqual(expected);
  });

  it.each([
    'hello',
    'I ran /topo submit yesterday',
    '> /topo submit\nquoted',
    '/topology submit',
    '',
    '/topos submit',
  ])('ignores a comment that is not a command: %j', (body) => {
    expect(parse(body)).toEqual({ kind: 'none' });
  });

  it.each(corpus.cases)('answers the bad command $body with the reason', ({ body, reason }) => {
    expect(parse(body)).toEqual({ kind: 'invalid', reason });
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
    ['/topo state', /takes one word: `\/topo state rebuild`/],
    ['/topo pause', /`\/topo pause` is taken on an autopilot experiment's dashboard issue, not here/],
  ])('rejects %j', (body, reason) => {
    const parsed = parse(body);
    expect(parsed.kind).toBe('invalid');
    expect(parsed.kind === 'invalid' && parsed.reason).toMatch(reason);
  });

  it('answers the dashboard’s `conclude` on a pull request with the report’s new name', () => {
    expect(parse('/topo conclude')).toEqual({
      kind: 'invalid',
      reason:
        "`/topo conclude` is taken on an autopilot experiment's dashboard issue, not here: `/topo report` posts the experiment’s final report here",
    });
  });

  it('help lists every pull request command, and the reason when given', () => {
    const help = helpText(COMMANDS, 'unknown command `deploy`');
    expect(help).toMatch(/^I did not understand that: unknown command `deploy`\./);
    for (const c of COMMANDS.filter((c) => c.where === 'pull')) expect(help).toContain(`\`/topo ${c.name}`);
    expect(help).not.toContain('/topo pause');
  });
});

describe('parseCommand on a dashboard', () => {
  it('reads the controls and nothing else', () => {
    expect(parse('/topo pause', 'dashboard')).toEqual({ kind: 'command', name: 'pause' });
    expect(parse('/topo pause --now', 'dashboard')).toEqual({
      kind: 'command',
      name: 'pause',
      argument: '--now',
    });
    expect(parse('  /topo resume  ', 'dashboard')).toEqual({ kind: 'command', name: 'resume' });
    expect(parse('/topo conclude', 'dashboard')).toEqual({ kind: 'command', name: 'conclude' });
    expect(parse('looks good /topo pause', 'dashboard')).toEqual({ kind: 'none' });
    expect(parse('/topology pause', 'dashboard')).toEqual({ kind: 'none' });
  });

  it.each([
    ['/topo submit', /`\/topo submit` is taken on a pull request, not here/],
    ['/topo pause later', /`\/topo pause` takes nothing or `--now`/],
    ['/topo pause --now\nbecause the cluster is needed', /`\/topo pause` takes nothing or `--now`/],
    ['/topo', /no command given/],
    ['/topo Pause', /unknown command `Pause`/],
    ['/topo resume --now', /`\/topo resume` takes no arguments/],
  ])('refuses %j', (body, reason) => {
    const parsed = parse(body, 'dashboard');
    expect(parsed.kind).toBe('invalid');
    expect(parsed.kind === 'invalid' && parsed.reason).toMatch(reason);
  });
});

describe('the registry', () => {
  it('holds each command once per place, and every command has a runner', () => {
    const keys = COMMANDS.map((c) => `${c.where}:${c.name}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const c of COMMANDS) expect(typeof c.run, c.name).toBe('function');
    expect(COMMANDS.filter((c) => c.recordedAtClose).map((c) => c.name)).toEqual(['reject', 'learn']);
  });

  it('lists every command file of src/commands (a command is one file and one line of the registry)', async () => {
    const dir = join(repoRoot, 'src/commands');
    const exported: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const mod = (await import(join(dir, file))) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod))
        if (value && typeof value === 'object' && 'where' in value && 'run' in value) {
          exported.push(`${file}:${name}`);
          expect(COMMANDS, `${file} exports ${name}, not in the registry`).toContain(value);
        }
    }
    expect(exported).toHaveLength(COMMANDS.length);
  });
});
