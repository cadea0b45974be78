import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { apply } from '../../../src/record/apply.js';
import { createRecord } from '../../../src/record/model.js';
import { serializeRecord } from '../../../src/record/validate.js';
import { renderFinalReport } from '../../../src/report/final-report.js';
import { EXPERIMENT, OUTCOMES } from '../../fixtures/record/scenario.js';

function workspace(recordText?: string) {
  const cwd = mkdtempSync(join(tmpdir(), 'topo-report-'));
  mkdirSync(join(cwd, 'experiments'));
  if (recordText !== undefined)
    writeFileSync(join(cwd, `experiments/${EXPERIMENT.experiment_id}.json`), recordText);
  const out = { stdout: '', stderr: '' };
  const io = {
    stdout: (t: string) => {
      out.stdout += t;
    },
    stderr: (t: string) => {
      out.stderr += t;
    },
    cwd,
    env: {},
    isTTY: false,
  };
  return { cwd, out, io };
}

describe('topo report', () => {
  const record = OUTCOMES.reduce(apply, createRecord(EXPERIMENT));

  it('prints the final report of an experiment by id, or writes it with --out', async () => {
    const { cwd, out, io } = workspace(serializeRecord(record));
    expect(await main(['report', EXPERIMENT.experiment_id], io)).toBe(0);
    expect(out.stdout).toBe(renderFinalReport(record));
    expect(await main(['report', `experiments/${EXPERIMENT.experiment_id}.json`, '--out', 'r.md'], io)).toBe(
      0,
    );
    expect(readFileSync(join(cwd, 'r.md'), 'utf8')).toBe(renderFinalReport(record));
  });

  it('fails naming the file when the record is missing or corrupt', async () => {
    const missing = workspace();
    expect(await main(['report', EXPERIMENT.experiment_id], missing.io)).toBe(2);
    expect(missing.out.stderr).toContain(`experiments/${EXPERIMENT.experiment_id}.json does not exist`);
    const corrupt = workspace('{"schema_version": 1');
    expect(await main(['report', EXPERIMENT.experiment_id], corrupt.io)).toBe(1);
    expect(corrupt.out.stderr).toContain(`experiments/${EXPERIMENT.experiment_id}.json: not valid JSON`);
  });

  it('rejects bad usage with exit code 2', async () => {
    const { io, out } = workspace();
    expect(await main(['report'], io)).toBe(2);
    expect(await main(['report', 'a', 'b'], io)).toBe(2);
    expect(await main(['report', 'x', '--bogus'], io)).toBe(2);
    expect(await main(['report', '../../etc/passwd'], io)).toBe(2);
    expect(out.stderr).toContain('usage: topo report');
  });
});

describe('writeInitialRecord (topo init)', () => {
  it('writes the empty record and its Markdown once, and never replaces an existing record', async () => {
    const { writeInitialRecord } = await import('../../../src/usecases/record.js');
    const { cwd } = workspace();
    const id = EXPERIMENT.experiment_id;
    expect(writeInitialRecord(cwd, EXPERIMENT).map((f) => f.slice(cwd.length + 1))).toEqual([
      `experiments/${id}.json`,
      `experiments/${id}.md`,
    ]);
    writeFileSync(join(cwd, `experiments/${id}.json`), '{"kept": true}');
    expect(writeInitialRecord(cwd, EXPERIMENT)).toEqual([]);
    expect(readFileSync(join(cwd, `experiments/${id}.json`), 'utf8')).toBe('{"kept": true}');
  });
});
