// Command-line options of every `topo` subcommand: one declaration per option (type, default,
// environment variable, bounds) feeds both Node's util.parseArgs and the --help text, so the two
// never disagree. Short flags and --flag=value come from util.parseArgs.
import { parseArgs as nodeParseArgs } from 'node:util';
import { UsageError } from './errors.js';

export interface OptionSpec {
  /** Long name without the dashes. */
  name: string;
  short?: string;
  /** boolean: a flag; string: any text; integer/number: validated against min/max. */
  type: 'boolean' | 'string' | 'integer' | 'number';
  /** Placeholder shown in the help (FILE, URL, N…). */
  value?: string;
  description: string;
  /** The default as the help shows it (applied by the command, or by `defaultValue`). */
  default?: string;
  /** Read when the option is absent. */
  env?: string;
  /** Inclusive bounds of a numeric option. */
  min?: number;
  max?: number;
  /** A numeric option must be above 0 (not equal). */
  positive?: boolean;
  /** May be given more than once (string options only). */
  multiple?: boolean;
}

export interface CommandHelp {
  /** `topo <name> <positionals> [options]` without the options. */
  synopsis: string;
  description?: string;
  options: readonly OptionSpec[];
  examples: readonly string[];
  /** Extra environment variables the command reads (beyond those of the options). */
  environment?: readonly { name: string; description: string }[];
}

export type OptionValue = string | boolean | number | string[] | undefined;

export interface Parsed {
  values: Record<string, OptionValue>;
  positionals: string[];
}

/** The option every command takes. */
export const HELP_OPTION: OptionSpec = {
  name: 'help',
  short: 'h',
  type: 'boolean',
  description: 'this help',
};

function numeric(spec: OptionSpec, raw: string): number {
  const n = Number(raw);
  const whole = spec.type === 'integer';
  const bad =
    raw.trim() === '' ||
    !Number.isFinite(n) ||
    (whole && !Number.isInteger(n)) ||
    (spec.positive && !(n > 0)) ||
    (spec.min !== undefined && n < spec.min) ||
    (spec.max !== undefined && n > spec.max);
  if (!bad) return n;
  const range =
    spec.min !== undefined && spec.max !== undefined
      ? ` from ${spec.min} to ${spec.max}`
      : spec.min !== undefined
        ? ` of at least ${spec.min}`
        : spec.positive
          ? ' above 0'
          : '';
  throw new UsageError(
    `--${spec.name} must be a ${whole ? 'whole number' : 'number'}${range}, not ${JSON.stringify(raw)}`,
  );
}

/** Strict parse: unknown options, missing values and bad numbers are usage errors (exit 2). */
export function parseOptions(
  specs: readonly OptionSpec[],
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Parsed {
  const all = [...specs, HELP_OPTION];
  const config: Record<string, { type: 'boolean' | 'string'; short?: string; multiple?: boolean }> = {};
  for (const s of all) {
    config[s.name] = {
      type: s.type === 'boolean' ? 'boolean' : 'string',
      ...(s.short ? { short: s.short } : {}),
      ...(s.multiple ? { multiple: true } : {}),
    };
  }
  let raw: ReturnType<typeof nodeParseArgs>;
  try {
    raw = nodeParseArgs({ args: [...args], options: config, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(plainParseError(error as Error));
  }
  const values: Record<string, OptionValue> = {};
  for (const s of all) {
    let v = raw.values[s.name] as OptionValue;
    if (v === undefined && s.env && env[s.env] !== undefined && env[s.env] !== '') v = env[s.env];
    if (typeof v === 'string' && (s.type === 'integer' || s.type === 'number')) v = numeric(s, v);
    if (typeof v === 'string' && v === '' && s.type === 'string')
      throw new UsageError(`--${s.name} needs a value`);
    values[s.name] = v;
  }
  return { values, positionals: raw.positionals };
}

/** util.parseArgs' messages, with the hint it gives kept and its error code left out. */
function plainParseError(error: Error): string {
  const m = error.message;
  const unknown = /Unknown option '([^']+)'/.exec(m);
  if (unknown) return `unknown option ${unknown[1]}`;
  const noArg = /Option '([^']+)' does not take an argument/.exec(m)?.[1];
  if (noArg) return `${noArg} is a flag and takes no value (write ${noArg.split(' ')[0]} alone)`;
  const missing = /Option '([^']+)' argument missing/.exec(m)?.[1];
  if (missing) return `${missing.replace(/ <value>$/, '')} needs a value`;
  const ambiguous = /Option '([^']+)' argument is ambiguous/.exec(m)?.[1];
  if (ambiguous) {
    const name = ambiguous
      .replace(/ <value>$/, '')
      .split(', ')
      .pop() as string;
    return `${name} needs a value; to pass one starting with "-" write ${name}=<value>`;
  }
  return m.replace(/^TypeError( \[[A-Z_]+\])?: /, '');
}

/** Typed accessors; a command reads its values through these. */
export function str(p: Parsed, name: string): string | undefined {
  const v = p.values[name];
  return typeof v === 'string' ? v : undefined;
}
export function num(p: Parsed, name: string): number | undefined {
  const v = p.values[name];
  return typeof v === 'number' ? v : undefined;
}
export function flag(p: Parsed, name: string): boolean {
  return p.values[name] === true;
}
export function list(p: Parsed, name: string): string[] {
  const v = p.values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

/** The --help text: synopsis, every option with its default and environment variable, examples. */
export function renderHelp(name: string, summary: string, help: CommandHelp): string {
  const lines = [`topo ${name}: ${summary}`, '', `usage: ${help.synopsis}`];
  if (help.description) lines.push('', help.description);
  const options = [...help.options, HELP_OPTION];
  const left = options.map(
    (o) =>
      `${o.short ? `-${o.short}, ` : '    '}--${o.name}${o.type === 'boolean' ? '' : ` ${o.value ?? 'VALUE'}`}`,
  );
  const width = Math.max(...left.map((l) => l.length));
  lines.push('', 'options:');
  options.forEach((o, i) => {
    const notes = [
      `default: ${o.default ?? (o.type === 'boolean' ? 'off' : 'none')}`,
      o.env ? `env: ${o.env}` : '',
      o.multiple ? 'repeatable' : '',
    ].filter(Boolean);
    lines.push(
      `  ${left[i]?.padEnd(width)}  ${o.description}${notes.length ? ` (${notes.join('; ')})` : ''}`,
    );
  });
  const env = [
    ...options.filter((o) => o.env).map((o) => ({ name: o.env as string, description: `--${o.name}` })),
    ...(help.environment ?? []),
  ];
  lines.push('', 'environment:');
  if (env.length === 0) lines.push('  none');
  for (const e of env) lines.push(`  ${e.name}  ${e.description}`);
  lines.push('', 'examples:', ...help.examples.map((e) => `  ${e}`));
  lines.push('', EXIT_CODES_LINE);
  return `${lines.join('\n')}\n`;
}

export const EXIT_CODES_LINE =
  'exit codes: 0 ok; 1 findings or a failed run; 2 usage or configuration error; 3 a service (Slurm, Prometheus, GitHub) unreachable; 4 refused (SSH host key not the pinned one); 130 interrupted (Ctrl-C), after leaving Slurm in order';
