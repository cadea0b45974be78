// The round's reference job a `/topo submit` asks for beside its candidates (`reference: beside`, the
// default): one job of the default branch's best (the record's, else its baseline), prepared from the
// default branch and pinned to its topology; or a line saying why none is asked for (another pull
// request's stands for the round, the best changed on the default branch). None under
// `reference: recorded`, with max_parallel 1, before the record has a best or a baseline, or for a
// round that runs the best itself.
import { existsSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { openPullRunStates } from '../github/run-state.js';
import { referenceModeOf } from '../judge/reference.js';
import { type ReferenceSource, standingReference } from '../lifecycle/reference.js';
import { recordPaths, referenceSourceOf } from '../record/model.js';
import { parseRecord } from '../record/validate.js';
import { type CandidateSource, type PreparedCandidate, prepareReferenceAt } from '../usecases/prepare.js';
import type { CommandContext } from './command.js';

export async function roundReferences(
  ctx: CommandContext,
  valid: readonly PreparedCandidate[],
): Promise<Array<PreparedCandidate | string>> {
  const out: Array<PreparedCandidate | string> = [];
  for (const id of new Set(valid.map((c) => c.experimentId))) {
    const mine = valid.filter((c) => c.experimentId === id);
    const experiment = (mine[0] as PreparedCandidate).experiment;
    if (referenceModeOf(experiment).mode !== 'beside') continue;
    const source = recordedReferenceSource(ctx.ports.source, id);
    if (!source || mine.some((c) => c.candidate === source.name)) continue;
    const { pulls } = await openPullRunStates(ctx.octokit, {
      owner: ctx.owner,
      repo: ctx.repo,
      botLogin: ctx.botLogin,
    });
    const held = pulls.flatMap((p) =>
      p.state.requests.map((request) => ({
        request,
        headSha: p.headSha,
        ...(p.state.outcomes[request.id] ? { outcome: p.state.outcomes[request.id] } : {}),
      })),
    );
    const standing = standingReference(held, id, source);
    if (standing) {
      out.push(
        `The reference job \`${standing.request.runName}\` of #${standing.request.pr} runs beside this round's candidates too (rounds of one experiment share it).`,
      );
      continue;
    }
    const prepared = await prepareReferenceAt(ctx.ports.source, source.path, source.topologyHash);
    out.push(
      prepared.ok
        ? prepared.candidate
        : `No reference job beside the candidates (they are decided against the recorded best): ${prepared.message}.`,
    );
  }
  return out;
}

/** The record's best (else baseline) on the default branch, as a reference job runs it; null without one. */
function recordedReferenceSource(source: CandidateSource, experimentId: string): ReferenceSource | null {
  const file = posix.join(source.workspace, recordPaths(experimentId).json);
  if (!existsSync(file)) return null;
  try {
    return referenceSourceOf(parseRecord(readFileSync(file, 'utf8'), recordPaths(experimentId).json));
  } catch {
    return null; // a corrupt record is the record action's to report
  }
}
