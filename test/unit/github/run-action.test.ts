// The runner-side parsing of test/support/run-action.ts: workflow commands and file commands,
// exactly as @actions/core writes them.
import { describe, expect, it } from 'vitest';
import { parseFileCommand, parseWorkflowCommands } from '../../support/run-action.js';

describe('parseWorkflowCommands', () => {
  it('reads annotations with escaped properties and data, and masks', () => {
    const out = [
      'plain log line',
      '::error file=topologies/e/a.yaml,line=5,col=3,title=gpu-index (topology.services.driver.gpus%5B2%5D)::GPU 9 does not exist%0Anext line: 100%25',
      '::warning file=a%2Cb.yaml,line=1::careful',
      '::add-mask::s3cr3t',
      '::debug::hidden',
    ].join('\n');
    const commands = parseWorkflowCommands(out);
    expect(commands.map((c) => c.command)).toEqual(['error', 'warning', 'add-mask', 'debug']);
    expect(commands[0]).toEqual({
      command: 'error',
      properties: {
        file: 'topologies/e/a.yaml',
        line: '5',
        col: '3',
        title: 'gpu-index (topology.services.driver.gpus%5B2%5D)',
      },
      message: 'GPU 9 does not exist\nnext line: 100%',
    });
    expect(commands[1]?.properties.file).toBe('a,b.yaml');
    expect(commands[2]?.message).toBe('s3cr3t');
  });
});

describe('parseFileCommand', () => {
  it('reads heredoc blocks (multi-line values) and legacy name=value lines', () => {
    const text = [
      'outcome<<ghadelimiter_1',
      'done',
      'ghadelimiter_1',
      'json<<ghadelimiter_2',
      '[1,',
      '2]',
      'ghadelimiter_2',
      'old=value',
      '',
    ].join('\n');
    expect(parseFileCommand(text)).toEqual({ outcome: 'done', json: '[1,\n2]', old: 'value' });
  });
});
