#!/usr/bin/env node
// CI's closing line from vitest's JSON report: `node scripts/ci-summary.mjs test-artifacts/vitest.json`.
// Exits 1 when any test was skipped or todo (or the report is missing or empty), so a test that did not
// run can never pass CI; the skipped tests are named.
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/** { line, failed } from a parsed vitest JSON report. */
export function summarise(report, cwd = process.cwd()) {
  const skipped = report.numPendingTests ?? 0;
  const todo = report.numTodoTests ?? 0;
  const lines = [
    `${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped, ${todo} todo`,
  ];
  const names = [];
  for (const file of report.testResults ?? [])
    for (const t of file.assertionResults ?? [])
      if (t.status === 'pending' || t.status === 'skipped' || t.status === 'todo')
        names.push(`  ${t.status}: ${relative(cwd, file.name)} › ${t.fullName ?? t.title}`);
  let failed = false;
  if (skipped + todo > 0) {
    failed = true;
    lines.push(
      `CI fails: ${skipped + todo} test(s) did not run. A test that needs a missing service must fail with a clear message instead of skipping.`,
      ...names,
    );
  }
  if (!report.numTotalTests) {
    failed = true;
    lines.push('CI fails: the report lists no tests');
  }
  return { line: lines.join('\n'), failed };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2] ?? 'test-artifacts/vitest.json';
  if (!existsSync(file)) {
    console.error(`ci-summary: no test report at ${file} (the test run did not finish)`);
    process.exit(1);
  }
  const { line, failed } = summarise(JSON.parse(readFileSync(file, 'utf8')));
  console.log(line);
  process.exit(failed ? 1 : 0);
}
