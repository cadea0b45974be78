// A name is not an owner (issue 40 item 1, invariant 21): which listed job may stand for a run is
// decided by what submission wrote into it (`--comment=topo:<request id>`) and, for a job that names
// no Request, by the bot's own Run records. Pure.
import { describe, expect, it } from 'vitest';
import { claimOf, isOwnedRun, recordedJobIds } from '../../../src/lifecycle/jobs.js';
import { requestComment, requestIdOfComment } from '../../../src/topology/run-name.js';

const exp = 'topology-opt-x-20260101';
const run = `topo-${exp}-a-0123abcd-0badc0de`;
const job = (id: string, comment: string | null) => ({
  id,
  name: run,
  requestId: requestIdOfComment(comment),
});

describe('the Request written into a job', () => {
  it('is topo:<request id>, read back only when it is exactly that', () => {
    expect(requestComment('0badc0de')).toBe('topo:0badc0de');
    expect(() => requestComment('nope')).toThrow(/8 hex digits/);
    expect(requestIdOfComment('topo:0badc0de')).toBe('0badc0de');
    for (const other of [
      null,
      undefined,
      '',
      'topo:',
      'topo:0BADC0DE',
      'topo:0badc0de0',
      'mine',
      'x topo:0badc0de',
    ])
      expect(requestIdOfComment(other)).toBeNull();
  });
});

describe('whose run a listed job is', () => {
  it('marked: its comment names the Request its name carries; foreign: another; unmarked: none', () => {
    expect(claimOf(job('1', 'topo:0badc0de'), exp)).toBe('marked');
    expect(claimOf(job('2', 'topo:11111111'), exp)).toBe('foreign');
    expect(claimOf(job('3', null), exp)).toBe('unmarked');
    expect(claimOf(job('4', 'made by hand'), exp)).toBe('unmarked');
    // a name of no labelled run: any Request its comment names is another's
    expect(claimOf({ id: '5', name: `topo-${exp}-a-0123abcd`, requestId: '0badc0de' }, exp)).toBe('foreign');
  });

  it('a marked job stands; a foreign one never; an unmarked one only where the Run records name it', () => {
    const recorded = recordedJobIds([{ jobId: '3' }, undefined, {}]);
    expect([...recorded]).toEqual(['3']);
    expect(isOwnedRun(job('1', 'topo:0badc0de'), exp, new Set())).toBe(true);
    expect(isOwnedRun(job('2', 'topo:11111111'), exp, new Set(['2']))).toBe(false);
    expect(isOwnedRun(job('2', 'topo:11111111'), exp)).toBe(false);
    expect(isOwnedRun(job('3', null), exp, recorded)).toBe(true);
    expect(isOwnedRun(job('4', null), exp, recorded)).toBe(false);
    // no state at hand (the CLI tracks runs by name): an unmarked job is taken by its name
    expect(isOwnedRun(job('4', null), exp)).toBe(true);
  });

  it('an unmarked job of a run name without a label is no exception: with the state at hand, only by its recorded id (issue 40)', () => {
    // every job the tool starts names its Request (withRunName), so such a job is made by hand or old
    const bare = (id: string) => ({ id, name: `topo-${exp}-a-0123abcd`, requestId: null });
    expect(claimOf(bare('6'), exp)).toBe('unmarked');
    expect(isOwnedRun(bare('6'), exp, new Set())).toBe(false);
    expect(isOwnedRun(bare('6'), exp, new Set(['6']))).toBe(true);
    expect(isOwnedRun(bare('6'), exp)).toBe(true);
  });
});
