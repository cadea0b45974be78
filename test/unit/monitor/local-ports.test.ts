// The monitor's ports for a checkout without GitHub (`topo watch`): the watch's memory is a state it
// saves after every change, so a second watch resumes: each run's comment by run name, the round's
// reference Requests with their Runs and Outcomes; only a reference job is ever submitted.
import { describe, expect, it } from 'vitest';
import {
  emptyWatchState,
  type LocalWatchState,
  localMonitorPorts,
} from '../../../src/monitor/local-ports.js';
import type { Cluster } from '../../../src/types/generated/clusters.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';

const EXP = 'topology-opt-vavam-local-20261206';
const experiment = { experiment_id: EXP, cluster: 'local', max_parallel: 3 } as Experiment;
const source = { name: 'baseline', path: `topologies/${EXP}/baseline.yaml`, topologyHash: '0123abcd' };

function ports(state: LocalWatchState, saved: string[] = [], submitted: string[] = []) {
  return localMonitorPorts({
    experiment,
    cluster: { time_scale: 60, gpus_per_node: 8 } as Cluster,
    timeScale: 60,
    prometheus: {} as never,
    scrapeSeconds: 1,
    slurm: { jobs: async () => [], cancel: async () => {} },
    runs: [{ candidate: 'model', runName: `topo-${EXP}-model-11111111-aaaaaaaa`, pr: 2 }],
    references: () => ({ referenceSource: source }),
    submitReference: async (r) => {
      submitted.push(r.runName);
      return { jobId: '7' };
    },
    state,
    save: (s) => saved.push(JSON.stringify(s)),
    login: 'alice',
    now: () => 1_765_000_000,
  });
}

describe('localMonitorPorts', () => {
  it("keeps each run's comment by its run name, saved, and read back by a second watch", async () => {
    const state = emptyWatchState();
    const saved: string[] = [];
    const first = ports(state, saved);
    const [exp] = await first.experiments();
    expect(exp?.candidates.map((c) => [c.candidate, c.pr, c.requested, c.role])).toEqual([
      ['model', 2, false, undefined],
    ]);
    await first.github.writeComment(2, 'model', 'the comment');
    expect(JSON.parse(saved.at(-1) as string).comments).toEqual({
      [`topo-${EXP}-model-11111111-aaaaaaaa`]: 'the comment',
    });
    const second = ports(JSON.parse(saved.at(-1) as string));
    await second.experiments();
    expect(await second.github.readComment(2, 'model')).toBe('the comment');
    expect(await second.github.readComment(3, 'model')).toBeUndefined();
  });

  it("makes the round's reference Request the user's, keeps it with its Run and Outcome, and submits only it", async () => {
    const state = emptyWatchState();
    const submitted: string[] = [];
    const p = ports(state, [], submitted);
    const [exp] = await p.experiments();
    const request = await p.lifecycle?.requestReference?.(exp as never, 2, '0'.repeat(40));
    expect(request).toMatchObject({ candidate: 'baseline', role: 'reference', login: 'alice', pr: 2 });
    expect(request?.runName).toMatch(new RegExp(`^topo-${EXP}-baseline-0123abcd-[0-9a-f]{8}$`));
    const [again] = await p.experiments();
    const ref = again?.candidates.find((c) => c.role === 'reference');
    expect(ref).toMatchObject({ candidate: 'baseline', runName: request?.runName, request });
    expect(await p.submit(again as never, ref as never)).toEqual({ jobId: '7' });
    expect(await p.submit(again as never, again?.candidates[0] as never)).toBeUndefined();
    expect(submitted).toEqual([request?.runName]);
    await p.lifecycle?.recordRun(2, request?.id as string, { jobId: '7', submittedAt: 'x' });
    await p.lifecycle?.recordOutcome(2, request?.id as string, { kind: 'decided', at: 'y', evidence: [] });
    const [last] = await p.experiments();
    expect(last?.candidates.find((c) => c.role === 'reference')).toMatchObject({
      run: { jobId: '7' },
      outcome: { kind: 'decided' },
    });
  });
});
