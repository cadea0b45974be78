// Predicted GPU memory above a GPU's capacity is an error, estimate or not; the 80-100% band stays a
// warning on clusters.yaml's estimate; --allow-unmeasured-memory (or the experiment's
// allow_unmeasured_memory) turns the estimate's error into a warning.
import { describe, expect, it } from 'vitest';
import { GPU_MEMORY_LIMITS } from '../../../src/catalog/alpasim.js';
import { validateFiles } from '../../../src/usecases/validate.js';
import { runTopo } from '../../support/cli.js';
import { CORPUS, CORPUS_EXPERIMENT, corpusSource } from './helpers.js';

const over = `${CORPUS_EXPERIMENT}/gpu-memory-over-capacity.yaml`;
const band = `${CORPUS_EXPERIMENT}/gpu-memory-over-90-estimate.yaml`;

async function memoryIssues(path: string, overlay: Record<string, string> = {}, allow = false) {
  const report = await validateFiles([path], {
    files: corpusSource(overlay),
    clustersFile: 'clusters.yaml',
    ...(allow ? { allowUnmeasuredMemory: true } : {}),
  });
  const file = report.files[0]!;
  return [...file.errors, ...file.warnings].filter((i) => i.rule === 'gpu-memory');
}

describe('gpu-memory', () => {
  it('above capacity on the estimate is an error that names the way out', async () => {
    expect(GPU_MEMORY_LIMITS.capacity).toBe(1);
    const [issue] = await memoryIssues(over);
    expect(issue?.severity).toBe('error');
    expect(issue?.message).toContain('(104%, above 100%)');
    expect(issue?.message).toContain('More than the GPU holds');
    expect(issue?.message).toContain('allow_unmeasured_memory');
  });

  it('between the 90% limit and capacity, the estimate stays a warning', async () => {
    const [issue] = await memoryIssues(band);
    expect(issue?.severity).toBe('warning');
    expect(issue?.message).toContain('(98%, above 90%)');
  });

  it('--allow-unmeasured-memory or the experiment key makes the estimate above capacity a warning', async () => {
    expect((await memoryIssues(over, {}, true))[0]?.severity).toBe('warning');
    const experiment = `${CORPUS_EXPERIMENT}/experiment.yaml`;
    const text = (await corpusSource().read(experiment)) as string;
    const allowed = await memoryIssues(over, { [experiment]: `${text}allow_unmeasured_memory: true\n` });
    expect(allowed[0]?.severity).toBe('warning');
    expect(allowed[0]?.message).toContain('allow_unmeasured_memory (--allow-unmeasured-memory) accepts it');
    const cli = await runTopo(['validate', '--clusters', 'clusters.yaml', over], CORPUS);
    expect(cli.code).toBe(1);
    const allowedCli = await runTopo(
      ['validate', '--allow-unmeasured-memory', '--clusters', 'clusters.yaml', over],
      CORPUS,
    );
    expect(allowedCli.code, allowedCli.stdout).toBe(0);
  });
});
