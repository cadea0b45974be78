// The structure issue 22 asks for, held by a test: no file or folder cycle in src/ and actions/,
// imports flowing one way (cli/actions → usecases/monitor → report/record → analysis/suggest →
// telemetry/slurm/github → topology/catalog), functions that fit a screen in the folders cleaned so
// far (SHORT_FUNCTION_PATHS), and no raw Slurm state outside src/slurm. Relative imports are read as
// text, type-only ones included: a cycle of types is still a cycle to read.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SLURM_JOB_STATES } from '../../../src/slurm/types.js';
import { repoRoot } from '../../support/run-action.js';
import { tsFiles } from '../../support/source-files.js';
import { TIERS } from '../../support/tiers.js';

const MAX_FUNCTION_LINES = 60;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [
    ...text.matchAll(/^(?:import|export)[^;]*? from '(\.[^']+)';/gms),
    ...text.matchAll(/\bimport\('(\.[^']+)'\)/g),
  ];
  return specs.map((m) => resolve(dirname(file), (m[1] as string).replace(/\.js$/, '.ts')));
}

function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

/** `src/<folder>/…` → folder; `actions/…` → actions. */
function folderOf(file: string): string {
  const [top, folder] = relative(repoRoot, file).split('/');
  return top === 'src' ? (folder as string) : (top as string);
}

const files = [...tsFiles(join(repoRoot, 'src')), ...tsFiles(join(repoRoot, 'actions'))];
const fileGraph = new Map(files.map((f) => [f, importsOf(f)]));
const folderArrows = new Map<string, string>(); // "a → b" → one file import that draws it
for (const [file, imports] of fileGraph)
  for (const target of imports) {
    const [from, to] = [folderOf(file), folderOf(target)];
    if (from !== to && fileGraph.has(target))
      folderArrows.set(
        `${from} → ${to}`,
        `${relative(repoRoot, file)} imports ${relative(repoRoot, target)}`,
      );
  }

describe('the import graph of src/ and actions/', () => {
  it('has no file cycle', () => {
    const found = cycles(fileGraph).map((c) => c.map((f) => relative(repoRoot, f)).join(' → '));
    expect(files.length).toBeGreaterThan(150);
    expect(found).toEqual([]);
  });

  it('has no folder cycle', () => {
    const graph = new Map<string, string[]>();
    for (const arrow of folderArrows.keys()) {
      const [from, to] = arrow.split(' → ') as [string, string];
      graph.set(from, [...(graph.get(from) ?? []), to]);
      if (!graph.has(to)) graph.set(to, []);
    }
    expect(cycles(graph).map((c) => c.join(' → '))).toEqual([]);
  });

  it('flows one way, down the tiers', () => {
    const tier = (folder: string) => TIERS.findIndex((t) => t.includes(folder));
    const folders = new Set(files.map(folderOf));
    expect(
      [...folders].filter((f) => tier(f) < 0),
      'folders missing from TIERS',
    ).toEqual([]);
    const upward = [...folderArrows]
      .filter(([arrow]) => {
        const [from, to] = arrow.split(' → ') as [string, string];
        return tier(to) < tier(from);
      })
      .map(([arrow, why]) => `${arrow}: ${why}`);
    expect(upward).toEqual([]);
  });
});

/**
 * The folders (or files) whose functions must fit a screen. The goal is all of src/, actions/ and
 * bench/ (issue 39); a folder joins the list once it is clean, so it cannot regrow.
 */
const SHORT_FUNCTION_PATHS = [
  'src/monitor',
  'src/usecases',
  'src/commands',
  'src/analysis',
  'src/judge',
  'src/sim',
  'src/topology',
  'src/chart',
  'src/telemetry',
  'src/setup',
  'src/github',
  'src/slurm',
  'src/suggest',
  'src/cli',
  'src/demo',
  'src/github-local',
  'actions/record',
  'actions/validate',
  'actions/monitor',
  'bench',
];

/** Every .ts file under a folder, or the file itself. */
function tsFilesAt(path: string): string[] {
  return path.endsWith('.ts') ? [path] : tsFiles(path);
}

describe(`functions in ${SHORT_FUNCTION_PATHS.join(', ')}`, () => {
  it(`fit a screen (at most ${MAX_FUNCTION_LINES} lines)`, () => {
    const long: string[] = [];
    for (const path of SHORT_FUNCTION_PATHS)
      expect(existsSync(join(repoRoot, path)), `${path} is gone: update SHORT_FUNCTION_PATHS`).toBe(true);
    for (const file of SHORT_FUNCTION_PATHS.map((p) => join(repoRoot, p)).flatMap(tsFilesAt)) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
          const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
          const name =
            node.name?.getText(source) ??
            (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(source) : '(anonymous)');
          if (end - start + 1 > MAX_FUNCTION_LINES)
            long.push(`${relative(repoRoot, file)}:${start + 1} ${name}: ${end - start + 1} lines`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(long).toEqual([]);
  });
});

/** An action's entry reads its inputs, builds its ports, calls one use case and reports (actions/checkout's main.ts is 48 lines). */
const MAX_ENTRY_LINES = 60;

describe("the actions' entry points", () => {
  it(`are thin: every actions/*/main.ts has at most ${MAX_ENTRY_LINES} lines`, () => {
    const entries = readdirSync(join(repoRoot, 'actions'))
      .map((a) => join(repoRoot, 'actions', a, 'main.ts'))
      .filter(existsSync);
    expect(entries.length).toBeGreaterThanOrEqual(4);
    const long = entries
      .map((file) => ({ file, lines: readFileSync(file, 'utf8').trimEnd().split('\n').length }))
      .filter((e) => e.lines > MAX_ENTRY_LINES)
      .map((e) => `${relative(repoRoot, e.file)}: ${e.lines} lines`);
    expect(long).toEqual([]);
  });
});

describe('one judge (issue 32)', () => {
  /** Files of src/ and actions/ that import or call one of `names`, with where. */
  function users(names: ReadonlySet<string>, within: readonly string[] = files): string[] {
    const found: string[] = [];
    for (const file of within) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        const name =
          ts.isImportSpecifier(node) || ts.isExportSpecifier(node)
            ? (node.propertyName ?? node.name).text
            : ts.isCallExpression(node) && ts.isIdentifier(node.expression)
              ? node.expression.text
              : null;
        if (name && names.has(name)) found.push(relative(repoRoot, file));
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    return [...new Set(found)].sort();
  }

  it('reads telemetry and observes runs only in src/judge (fetchTelemetry, observeRun)', () => {
    const outside = users(new Set(['fetchTelemetry', 'observeRun'])).filter(
      (f) => !f.startsWith('src/judge/'),
    );
    expect(outside).toEqual([]);
  });

  it('maps Slurm jobs to run jobs only in src/judge/job.ts (classifyFailure)', () => {
    const outside = users(new Set(['classifyFailure'])).filter((f) => f !== 'src/judge/job.ts');
    expect(outside).toEqual([]);
  });

  it('decides through one path (issue 38 item 7): the monitor, the CLI and the benches call decideLook', () => {
    // the rules that decide a candidate at one look, called anywhere else, would be a second path
    const rules = new Set(['decideCandidate', 'pruneByLeader', 'claimRadius', 'closeOpen']);
    const benches = tsFiles(join(repoRoot, 'bench'));
    const outside = users(rules, [...files, ...benches]).filter(
      (f) => f !== 'src/analysis/decision.ts' && f !== 'src/analysis/decide-look.ts',
    );
    expect(outside).toEqual([]);
    expect(users(new Set(['decideLook']), benches)).toEqual(
      expect.arrayContaining(['bench/campaign/decide.ts', 'bench/decision-family.ts']),
    );
  });

  it("stops a reference job beside its candidates by the product's one rule, in the monitor and the benches", () => {
    // a bench that kept its reference to the last open candidate measured a lifetime no product run has
    const benches = tsFiles(join(repoRoot, 'bench'));
    expect(users(new Set(['referenceNeeded']), [...files, ...benches])).toEqual(
      expect.arrayContaining([
        'src/monitor/reference-job.ts',
        'bench/campaign/decide.ts',
        'bench/decision-family.ts',
      ]),
    );
  });
});

describe('one Slurm state map (issues 39 item 5, 40)', () => {
  it('compares no raw Slurm state outside src/slurm: everything above reads its JobStatus', () => {
    const states = new Set<string>(SLURM_JOB_STATES);
    // Words other APIs share with Slurm: a GitHub review's state.
    const notSlurm = new Set(['src/usecases/autopilot-github.ts PENDING']);
    const found: string[] = [];
    for (const file of files) {
      const where = relative(repoRoot, file);
      if (where.startsWith('src/slurm/') || where.startsWith('src/types/generated/')) continue;
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        // 'CANCELLED' anywhere, and { COMPLETED: … } as a table's key
        const text =
          ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
            ? node.text
            : ts.isPropertyAssignment(node) && ts.isIdentifier(node.name)
              ? node.name.text
              : null;
        if (text !== null && states.has(text) && !notSlurm.has(`${where} ${text}`)) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          found.push(`${where}:${line + 1} ${text}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(found).toEqual([]);
  });
});

describe('one vocabulary of settings (issue 39 item 5)', () => {
  it('writes no default of an experiment setting outside src/topology/settings.ts: every reader resolves it through experimentSettings', () => {
    // `max_parallel ?? 3`, `options.minImprovement ?? 0.02`, `stop_when_decided !== false`: a second
    // copy of a schema default (experiment.schema.json's, read once by src/topology/settings.ts)
    const keys =
      'max_parallel|min_improvement|max_decision_minutes|decision_boundary|stop_when_decided|stop_when_stable|comment_interval_minutes|rollouts_per_scene|maxParallel|minImprovement|maxDecisionMinutes|stopWhenDecided|stopWhenStable|commentIntervalMinutes|rolloutsPerScene';
    const copy = new RegExp(
      `\\b(${keys})\\)?\\s*(\\?\\?\\s*([0-9]|'|"|true\\b|false\\b)|!==\\s*false\\b|===\\s*true\\b)`,
    );
    const found: string[] = [];
    for (const file of [...files, ...tsFiles(join(repoRoot, 'bench'))]) {
      const where = relative(repoRoot, file);
      if (where === 'src/topology/settings.ts' || where.startsWith('src/types/generated/')) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (copy.test(line)) found.push(`${where}:${i + 1} ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });
});

describe('one run-name parser (issue 39 item 5)', () => {
  it('writes no run-name pattern outside src/topology/run-name.ts: every reader takes its parser or shapes', () => {
    // `topo-…` or an 8-hex-digit part (hash8, run label) in a regular expression: a second grammar of
    // the run's name, free to drift from the one submission writes
    const runNamePart = /topo-|\[0-9a-f\]\{8\}|\[a-f0-9\]\{8\}|\\\\?[0-9a-f]\{8\}/i;
    const found: string[] = [];
    for (const file of [...files, ...tsFiles(join(repoRoot, 'bench'))]) {
      const where = relative(repoRoot, file);
      if (where === 'src/topology/run-name.ts' || where.startsWith('src/types/generated/')) continue;
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        // a /regex/ literal, or the text a `new RegExp(…)` is built from
        const pattern = ts.isRegularExpressionLiteral(node)
          ? node.text
          : ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'RegExp'
            ? (node.arguments?.[0]?.getText(source) ?? '')
            : null;
        if (pattern !== null && runNamePart.test(pattern)) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          found.push(`${where}:${line + 1} ${pattern}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(found).toEqual([]);
  });
});

describe('the monitor stages return their results (issue 39 item 3)', () => {
  /** The stage modules of src/monitor: each returns its result; only state.ts puts it in the pass. */
  const STAGE_FILES = [
    'read',
    'observe',
    'clock',
    'judge',
    'decide',
    'reference-job',
    'autopilot',
    'act',
    'publish',
    'comment',
    'report',
    'loop',
  ].map((name) => join(repoRoot, 'src/monitor', `${name}.ts`));
  const STATE_FILE = join(repoRoot, 'src/monitor/state.ts');
  const MUTATORS = new Set([
    'push',
    'unshift',
    'splice',
    'pop',
    'shift',
    'sort',
    'reverse',
    'set',
    'delete',
    'clear',
    'add',
  ]);

  /** The writes a stage still makes into the pass (a section of state.ts's, or a view): file, function's line, target. */
  function passWrites(): string[] {
    const program = ts.createProgram(STAGE_FILES, {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    });
    const checker = program.getTypeChecker();
    /** The type is one of the pass's (declared in state.ts, or a candidate's view). */
    const ofPass = (node: ts.Expression): boolean => {
      const type = checker.getNonNullableType(checker.getTypeAtLocation(node));
      const types = type.isUnion() ? type.types : [type];
      return types.some((t) =>
        (t.aliasSymbol ?? t.getSymbol())?.declarations?.some(
          (d) => d.getSourceFile().fileName === STATE_FILE || t.getSymbol()?.getName() === 'CandidateView',
        ),
      );
    };
    /** A property write whose target's chain goes through an object of the pass. */
    const intoPass = (target: ts.Expression): boolean => {
      let x: ts.Expression = target;
      while (ts.isParenthesizedExpression(x) || ts.isNonNullExpression(x)) x = x.expression;
      if (!ts.isPropertyAccessExpression(x) && !ts.isElementAccessExpression(x)) return false;
      for (let o: ts.Expression = x.expression; ; ) {
        if (ofPass(o)) return true;
        while (ts.isParenthesizedExpression(o) || ts.isNonNullExpression(o)) o = o.expression;
        if (!ts.isPropertyAccessExpression(o) && !ts.isElementAccessExpression(o)) return false;
        o = o.expression;
      }
    };
    const found: string[] = [];
    for (const file of STAGE_FILES) {
      const source = program.getSourceFile(file);
      if (!source) throw new Error(`${file} is not in the program`);
      const visit = (node: ts.Node): void => {
        const target =
          ts.isBinaryExpression(node) &&
          node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
          node.operatorToken.kind <= ts.SyntaxKind.LastAssignment
            ? node.left
            : ts.isDeleteExpression(node)
              ? node.expression
              : (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
                  [ts.SyntaxKind.PlusPlusToken, ts.SyntaxKind.MinusMinusToken].includes(node.operator)
                ? node.operand
                : ts.isCallExpression(node) &&
                    ts.isPropertyAccessExpression(node.expression) &&
                    MUTATORS.has(node.expression.name.text)
                  ? node.expression
                  : null;
        if (target && intoPass(target))
          found.push(`${relative(repoRoot, file)}: ${target.getText(source).replace(/\s+/g, ' ')}`);
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    return found;
  }

  it('write nothing into the pass: each returns its own result and state.ts stores it', () => {
    // a write here belongs in the stage's result, stored by a store… function of state.ts
    expect(passWrites()).toEqual([]);
  }, 60_000);
});
