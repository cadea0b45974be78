// "Which job stands for this run?" — one function for every path. Exact name equality (never a
// prefix): the oldest live job (younger ones are duplicates being retired), else the newest ended.
import { isLive, type JobStatus } from '../slurm/types.js';

export interface NamedJob {
  id: string;
  name: string;
  status: JobStatus;
}

/** Numeric job id order (Slurm ids grow with submission); "123_4" array elements after "123". */
export function compareJobIds(a: string, b: string): number {
  const [a1, a2] = a.split('_').map(Number);
  const [b1, b2] = b.split('_').map(Number);
  return (a1 ?? 0) - (b1 ?? 0) || (a2 ?? 0) - (b2 ?? 0);
}

export function jobForRun<J>(jobs: readonly J[], runName: string, view: (job: J) => NamedJob): J | null {
  const mine = jobs.filter((j) => view(j).name === runName);
  const order = (a: J, b: J) => compareJobIds(view(a).id, view(b).id);
  const live = mine.filter((j) => isLive(view(j).status)).sort(order);
  if (live[0]) return live[0];
  return mine.sort(order).at(-1) ?? null;
}
