// Property test of the listing parsers (issue 40 item 3): lines generated from every form Slurm prints
// each field in (times NONE/Unknown/N/A, limits UNLIMITED/Partition_Limit, any user, comment and
// name, very long names) all parse, each to the job it was made from; a corrupted line is skipped
// with why and never costs the other lines; no input at all makes a parser throw. Before, one
// foreign job's EndTime `NONE` threw for the whole listing, and every command and pass failed.
import { describe, expect, it } from 'vitest';
import { createRng } from '../../../src/sim/rng.js';
import { parseSacct, parseSqueue, SACCT_FIELDS, SQUEUE_FIELDS } from '../../../src/slurm/parse.js';
import { SLURM_JOB_STATES } from '../../../src/slurm/types.js';

/** The project's seeded generator (mulberry32), so a failure names the seed that makes it again. */
const rng = (seed: number): Rand => createRng(seed).next;
type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
const int = (r: Rand, n: number) => Math.floor(r() * n);
const pad = (n: number) => String(n).padStart(2, '0');

const iso = (r: Rand) =>
  `20${20 + int(r, 10)}-${pad(1 + int(r, 12))}-${pad(1 + int(r, 28))}T${pad(int(r, 24))}:${pad(int(r, 60))}:${pad(int(r, 60))}`;
const TIME_FORMS = [iso, () => 'N/A', () => 'NONE', () => 'Unknown', () => 'None', () => '(null)', () => ''];
const JOB_IDS = [
  (r: Rand) => String(1 + int(r, 1e7)),
  (r: Rand) => `${1 + int(r, 1e6)}_${int(r, 1000)}`,
  (r: Rand) => `${1 + int(r, 1e6)}_[${int(r, 5)}-${5 + int(r, 50)}%${1 + int(r, 4)}]`,
  (r: Rand) => `${1 + int(r, 1e6)}+${int(r, 3)}`,
];
const squeueDuration = (r: Rand) =>
  pick(r, [
    `${int(r, 60)}:${pad(int(r, 60))}`,
    `${int(r, 24)}:${pad(int(r, 60))}:${pad(int(r, 60))}`,
    `${1 + int(r, 400)}-${pad(int(r, 24))}:${pad(int(r, 60))}:${pad(int(r, 60))}`,
  ]);
const sacctDuration = (r: Rand) =>
  pick(r, [
    `${pad(int(r, 24))}:${pad(int(r, 60))}:${pad(int(r, 60))}`,
    `${1 + int(r, 400)}-${pad(int(r, 24))}:${pad(int(r, 60))}:${pad(int(r, 60))}`,
  ]);
const LIMIT_WORDS = ['UNLIMITED', 'Partition_Limit', 'NOT_SET', 'INVALID', 'N/A'];
const REASONS = [
  'None',
  'Resources',
  'Priority',
  'JobHeldUser',
  'JobHeldAdmin',
  'BeginTime',
  'Dependency',
  'ReqNodeNotAvail,_UnavailableNodes:node4',
  'NonZeroExitCode',
  'TimeLimit',
  '(null)',
  '',
];
const NODES = ['', '(null)', 'None assigned', 'node1', 'node[1-3]', 'pool0-[0106-0107],gpu7'];
const TRES = [
  '',
  'N/A',
  'cpu=16,mem=4G,node=1,billing=16,gres/gpu=8',
  'cpu=1,gres/gpu:a100=4,gres/gpu:h100=2,node=1',
];
const PER_NODE = ['N/A', '', 'gres:gpu:8', 'gres/gpu:a100:4'];
const USERS = ['root', 'alice', 'topo-other', 'john.doe@example.com', 'CORP\\jdoe', '1001', 'a'.repeat(64)];
const COMMENTS = ['(null)', '', 'topo:0123abcd', 'sweep 3 of 9', 'a|b c', 'é ü 漢字', 'x'.repeat(500)];
const OUTPUTS = ['N/A', '', '/scratch/%x_%j.log', '/home/a b/slurm-%A_%a.out', '/dev/null'];

function name(r: Rand): string {
  return pick(r, [
    () =>
      `topo-topology-opt-vavam-x-20260105-c${int(r, 9)}-0123abcd-${(int(r, 0xffffffff) >>> 0).toString(16).padStart(8, '0')}`,
    () => 'wrap',
    () => 'a name with spaces',
    () => 'weird"name\'$(x)',
    () => 'ü漢字',
    () => 'n'.repeat(200 + int(r, 800)),
    () => 'left|right',
    () => '',
  ])();
}

interface Made {
  line: string;
  id: string;
  state: string;
  user: string;
  comment: string;
  name: string;
}

/** What every line names: the job, its state, and what its owner wrote (user, comment, name). */
function person(r: Rand, state: string) {
  return { id: pick(r, JOB_IDS)(r), state, user: pick(r, USERS), comment: pick(r, COMMENTS), name: name(r) };
}
const times = (r: Rand) => [pick(r, TIME_FORMS)(r), pick(r, TIME_FORMS)(r), pick(r, TIME_FORMS)(r)];
const limit = (r: Rand, d: (r: Rand) => string) => (r() < 0.5 ? pick(r, LIMIT_WORDS) : d(r));
const used = (r: Rand, d: (r: Rand) => string) => (r() < 0.9 ? d(r) : 'INVALID');

function squeueLine(r: Rand): Made {
  const p = person(r, pick(r, [...SLURM_JOB_STATES, 'POWER_UP_NODE']));
  const exit = pick(r, ['0', '256', '9', '15', 'N/A', '']);
  const fields = [p.id, p.state, pick(r, REASONS), exit, String(int(r, 5)), ...times(r)];
  fields.push(limit(r, squeueDuration), used(r, squeueDuration), pick(r, NODES), pick(r, ['1', '2', '1-2']));
  fields.push(pick(r, TRES), pick(r, PER_NODE), p.user, pick(r, OUTPUTS), p.comment, p.name);
  expect(fields).toHaveLength(SQUEUE_FIELDS.length);
  return { line: fields.join('|'), ...p };
}

function sacctLine(r: Rand): Made {
  const bare = pick(r, [...SLURM_JOB_STATES, 'POWER_UP_NODE']);
  const p = person(r, bare === 'CANCELLED' && r() < 0.5 ? `CANCELLED by ${int(r, 2000)}` : bare);
  const exit = pick(r, ['0:0', '1:0', '0:15', '255:0', '0:9']);
  const fields = [p.id, p.state, pick(r, REASONS), exit, ...times(r), limit(r, sacctDuration)];
  fields.push(used(r, sacctDuration), pick(r, NODES), pick(r, TRES), p.user, p.comment, p.name);
  expect(fields).toHaveLength(SACCT_FIELDS.length);
  return { line: fields.join('|'), ...p };
}

/** One field of the line replaced by text Slurm never prints there. */
function corrupt(r: Rand, made: Made): string {
  const parts = made.line.split('|');
  const i = pick(r, [0, 1, 5, 6, 7]); // id, state, times: each must be read exactly
  parts[i] = pick(r, ['12/02-12:20:12', 'run?ning', 'abc', '-1x', 'Tomorr 10:00']);
  return pick(r, [parts.join('|'), parts.slice(0, 4).join('|')]);
}

const SEEDS = [1, 40, 2026];
const formats = [
  { command: 'squeue', make: squeueLine, parse: parseSqueue },
  { command: 'sacct', make: sacctLine, parse: parseSacct },
] as const;

describe.each(formats)(
  '$command lines generated from every form Slurm prints',
  ({ command, make, parse }) => {
    it.each(SEEDS)('seed %i: every line parses to the job it was made from', (seed) => {
      const r = rng(seed);
      const made = Array.from({ length: 400 }, () => make(r));
      const { jobs, skipped } = parse(`${made.map((m) => m.line).join('\n')}\n`);
      expect(skipped).toEqual([]);
      expect(jobs).toHaveLength(made.length);
      jobs.forEach((job, i) => {
        const m = made[i] as Made;
        expect(job.id).toBe(m.id);
        expect(job.name).toBe(m.name.split('|').at(-1));
        expect(job.user).toBe(m.user);
        expect(job.rawState ?? job.state).toBe(m.state.split(' ')[0]);
        if (!m.name.includes('|') && !m.comment.includes('|'))
          expect(job.comment).toBe(['(null)', ''].includes(m.comment) ? null : m.comment);
        for (const t of [job.submitTime, job.startTime, job.endTime])
          expect(t === null || /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(t)).toBe(true);
        expect(job.source).toBe(command);
      });
    });

    it.each(SEEDS)('seed %i: a corrupted line is skipped with why; the others stand', (seed) => {
      const r = rng(seed * 7919);
      const made = Array.from({ length: 200 }, () => make(r));
      const bad = new Set(made.map((_, i) => i).filter(() => r() < 0.1));
      const lines = made.map((m, i) => (bad.has(i) ? corrupt(r, m) : m.line));
      const { jobs, skipped } = parse(lines.join('\n'));
      expect(jobs.map((j) => j.id)).toEqual(made.filter((_, i) => !bad.has(i)).map((m) => m.id));
      expect(skipped.map((s) => s.line)).toEqual(lines.filter((_, i) => bad.has(i)));
      for (const s of skipped) expect(s).toMatchObject({ command, problem: expect.stringMatching(/\S/) });
    });

    it.each(SEEDS)('seed %i: arbitrary text never throws', (seed) => {
      const r = rng(seed * 104729);
      const alphabet = 'ab01:-_|| \n\n/()NONE[]%+é';
      for (let n = 0; n < 200; n++) {
        const text = Array.from({ length: int(r, 400) }, () => pick(r, [...alphabet])).join('');
        const { jobs, skipped } = parse(text);
        expect(jobs.length + skipped.length).toBe(text.split('\n').filter((l) => l.trim() !== '').length);
      }
    });
  },
);
