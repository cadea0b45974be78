// The autopilot in the campaign bench: topo's loop (src/campaign/loop.ts runCampaign with suggest's
// proposals, the monitor's decisions, the reference beside each round) with each turn planned by the
// autopilot's own reconcile step (src/autopilot/core.ts planStep, which calls the loop's planRound)
// over the runs as a monitor pass reads them (rebuilt by campaignOf), instead of planRound over the
// loop's own state. Same world, same seed: where the autopilot reads the rounds as the loop keeps
// them, the runs, rounds, GPU-hours and winner are the same; `roundsDiverge` says where they are not.
import { campaignOf, type PilotInput, type PilotRun, planStep } from '../../src/autopilot/core.js';
import type { AutopilotPolicy } from '../../src/autopilot/policy.js';
import type { CampaignStep, ProposalLike, Suggestion } from '../../src/campaign/loop.js';
import {
  type CampaignPolicy,
  type CampaignState,
  closeRound,
  type RoundRun,
  startCampaign,
} from '../../src/campaign/rounds.js';
import type { Proposal } from '../../src/suggest/types.js';
import type { Context, MethodResult, PlanFactory } from './methods.js';
import type { Ledger } from './sim.js';

/** The runs a monitor pass reads once the state's rounds closed: each winner merged, each other closed. */
export function pilotRunsOf(state: CampaignState): PilotRun[] {
  const b = state.baseline;
  const runs: PilotRun[] = [
    {
      name: b.name,
      round: 0,
      origin: 'person',
      pull: 'merged',
      request: 'ended',
      outcome: b.seconds === null ? 'failed' : 'equivalent',
      ...(b.seconds !== null ? { seconds: b.seconds } : {}),
      gpuHours: b.gpuHours,
      recorded: true,
    },
  ];
  // a candidate keeps one pull request over its jobs (a rerun runs it again in a later round):
  // merged once it won a round, open while its last job's decision is held, else closed
  const won = new Set<string>();
  const last = new Map<string, RoundRun>();
  let replay = startCampaign(b);
  for (const round of state.rounds) {
    const before = replay.best?.name;
    replay = closeRound(replay, round);
    if (replay.best && replay.best.name !== before) won.add(replay.best.name);
    for (const r of round.runs) last.set(r.name, r);
  }
  const prs = new Map([...last.keys()].map((name, i) => [name, i + 1]));
  for (const round of state.rounds)
    for (const r of round.runs)
      runs.push({
        ...r,
        round: round.index,
        origin: 'bot',
        pr: prs.get(r.name)!,
        pull: won.has(r.name) ? 'merged' : last.get(r.name)?.held ? 'open' : 'closed',
        request: 'ended',
        recorded: true,
      });
  return runs;
}

/** Each round's reference job as the loop recorded it, by round (what the bot's state would keep). */
export function referencesOf(state: CampaignState): NonNullable<PilotInput['references']> {
  return Object.fromEntries(
    state.rounds.flatMap((r) => (r.reference ? [[String(r.index), r.reference] as const] : [])),
  );
}

/** The bench's campaign policy as an experiment's autopilot block (submit and merge: auto). */
function policyOf(ctx: Context, policy: CampaignPolicy): AutopilotPolicy {
  return {
    enabled: true,
    maxRounds: policy.maxRounds ?? 99,
    gpuHours: policy.gpuHours ?? ctx.budget,
    parallel: policy.parallel,
    stopAfter: policy.stopAfter,
    submit: 'auto',
    merge: 'auto',
    requiredChecks: [],
    minImprovement: policy.minImprovement,
  };
}

/**
 * The autopilot's plan of one turn: planStep over the runs (the reference jobs' GPU-hours spent
 * beside them, as the bot's state keeps them) with suggest's answer, as the monitor's stage plans a
 * due round. `predicted` is the bot's state: what the model predicted best in each round it opened.
 */
function autopilotTurn(ctx: Context, ledger: Ledger, predicted: Record<string, string | null>) {
  return (
    state: CampaignState,
    policy: CampaignPolicy,
    suggestion: Suggestion<Proposal>,
    cost: number,
  ): CampaignStep<Proposal> => {
    const runs = pilotRunsOf(state);
    const plan = planStep({
      experimentId: ctx.experimentId,
      policy: policyOf(ctx, policy),
      runs,
      controls: { paused: false, stopLive: false },
      runGpuHours: cost,
      // the reference jobs: held by runs that are not candidates (the bot's state keeps them)
      spentElsewhere: Math.max(0, ledger.total() - runs.reduce((a, r) => a + r.gpuHours, 0)),
      suggestion: namesOf(suggestion),
      predicted,
      references: referencesOf(state),
    });
    const open = plan.actions.find((a) => a.kind === 'open');
    if (open?.kind === 'open') {
      if (open.predicted) predicted[String(open.round)] = open.predicted.best;
      const chosen = open.proposals ?? [];
      const last = state.rounds.at(-1)?.runs ?? [];
      return {
        kind: 'round',
        round: {
          index: open.round,
          parent: open.parent,
          reruns: (open.reruns ?? []).map((name) => last.find((r) => r.name === name)!),
          proposals: suggestion.proposals.filter((p) => chosen.includes(p.candidate.name)),
          predictedBest: open.predicted?.best ?? null,
          modelled: !!open.predicted,
        },
      };
    }
    const done = plan.actions.find((a) => a.kind === 'conclude');
    if (done?.kind === 'conclude') return { kind: 'conclude', reason: done.reason };
    throw new Error(
      `the autopilot neither opens a round nor concludes: ${plan.waiting ?? JSON.stringify(plan.actions)}`,
    );
  };
}

function namesOf(s: Suggestion<ProposalLike>): Suggestion {
  return {
    proposals: s.proposals.map((p) => ({ candidate: { name: p.candidate.name }, change: p.change })),
    stop: s.stop,
    ...(s.outlook !== undefined ? { outlook: s.outlook } : {}),
  };
}

/** The autopilot's planner for topoCampaign: a fresh bot state per campaign. */
export function autopilotPlanner(ctx: Context): PlanFactory {
  return (ledger) => autopilotTurn(ctx, ledger, {});
}

/** Each round as `index parent: name outcome, …`, and the conclusion's kind. */
export function roundsOf(result: MethodResult): string[] {
  const rounds = (result.state?.rounds ?? []).map(
    (r) => `${r.index} ${r.parent}: ${r.runs.map((x) => `${x.name} ${x.outcome}`).join(', ')}`,
  );
  return [...rounds, `concluded: ${result.stopReason.replace(/:.*$/, '').replace(/ \d.*$/, '')}`];
}

/** Where the autopilot's rounds leave the campaign's: the first differing line, or null. */
export function roundsDiverge(topo: MethodResult, pilot: MethodResult): string | null {
  const a = roundsOf(topo);
  const b = roundsOf(pilot);
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    if (a[i] !== b[i]) return `line ${i + 1}: topo "${a[i] ?? '(none)'}", autopilot "${b[i] ?? '(none)'}"`;
  return null;
}

/** campaignOf over pilotRunsOf gives back the rounds' best (the autopilot reads what the loop closed). */
export function sameCampaign(state: CampaignState): boolean {
  const back = campaignOf(pilotRunsOf(state), {}, referencesOf(state)).state;
  return back.best?.name === state.best?.name && back.rounds.length === state.rounds.length;
}
