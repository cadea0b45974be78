// Parses the user's full AlpaSim launch command (the seed's starting input):
//   [ENV=val …] sbatch [sbatch options] …/submit.sh deploy=… topology=… driver=… [hydra overrides…]
// also `bash …/submit.sh …` or the script alone. Pure: no shell is involved, words are split here.
import { REQUIRED_GROUPS } from '../catalog/alpasim.js';

export class RunCommandError extends Error {
  override name = 'RunCommandError';
}

export interface SbatchSettings {
  account?: string;
  partition?: string;
  time?: string;
  gpusPerNode?: number;
  /** `--gpus=N` (GPUs of the job; one node). */
  gpus?: number;
  nodes?: number;
  exclusive?: boolean;
  /** sbatch options that do not map to a setting (e.g. --job-name, --output: topo sets those). */
  ignored: string[];
}

export interface ParsedRunCommand {
  /** The folder of a leading `cd <dir> &&` (AlpaSim's own form: cd src/tools/run-on-slurm && sbatch submit.sh …). */
  cwd?: string;
  /** `NAME=value` assignments before the command (LOGDIR, DESCRIPTION, …). */
  env: Record<string, string>;
  launcher: 'sbatch' | 'bash' | 'direct';
  sbatch: SbatchSettings;
  submitScript: string;
  /** Every Hydra override in order, including deploy/topology/driver. */
  overrides: string[];
  deploy: string;
  topology: string;
  driver: string;
}

const UNSAFE = /[;&|<>`$()]/;

/** The launch forms `topo init` reads, as its messages list them. */
export const ACCEPTED_FORMS = [
  'sbatch [sbatch options] <alpasim>/src/tools/run-on-slurm/submit.sh deploy=… topology=… driver=… [overrides]',
  'cd src/tools/run-on-slurm && sbatch [sbatch options] submit.sh deploy=… topology=… driver=… [overrides]',
  'bash <alpasim>/src/tools/run-on-slurm/submit.sh deploy=… … (or the script alone)',
  '[LOGDIR=… DESCRIPTION=…] before any of them',
];

const formsText = () => `topo init accepts: ${ACCEPTED_FORMS.map((f, i) => `(${i + 1}) ${f}`).join('; ')}`;

/** Overrides a wizard run sets that submit.sh sets itself on Slurm (left out of the suggested command). */
const SET_BY_SUBMIT = /^\+{0,2}wizard\.(log_dir|array_job_dir|latest_symlink|submitter|description)=/;

/**
 * AlpaSim's wizard started directly (`uv run alpasim_wizard …`, `uv run --project src/wizard
 * alpasim_wizard …`, `python -m alpasim_wizard …`): a run on this machine, not a Slurm job. Said as
 * such, with the Slurm form of the same overrides (submit.sh hands them to the wizard unchanged).
 */
function wizardInvocation(words: readonly string[], from: number): RunCommandError | undefined {
  const at = words.findIndex(
    (w, i) =>
      i >= from && (w === 'alpasim_wizard' || w.endsWith('/alpasim_wizard') || w === 'alpasim-wizard'),
  );
  if (at === -1) return undefined;
  const head = words.slice(from, at + 1).join(' ');
  const overrides = words.slice(at + 1).filter((w) => /^\+{0,2}[A-Za-z_][A-Za-z0-9_./]*=/.test(w));
  const kept = overrides.filter((w) => !SET_BY_SUBMIT.test(w));
  return new RunCommandError(
    `\`${head} …\` starts AlpaSim's wizard directly, a run on this machine; topo init takes the command that submits the run to Slurm, whose jobs the experiment's candidates become. ${formsText()}. submit.sh hands its overrides to the wizard unchanged, so this run on Slurm is: sbatch src/tools/run-on-slurm/submit.sh ${kept.join(' ') || 'deploy=… topology=… driver=…'}${kept.length < overrides.length ? ' (wizard.log_dir and the other wizard.* settings submit.sh sets itself are left out)' : ''}`,
  );
}

/** POSIX-like word splitting: quotes, backslash escapes and line continuations; no expansions. */
export function splitWords(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  const s = command;
  while (i < s.length) {
    const c = s[i] as string;
    if (c === '\\' && s[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
      continue;
    }
    inWord = true;
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end === -1)
        throw new RunCommandError(`unterminated single quote at character ${i + 1} of the command`);
      word += s.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i++;
      while (i < s.length && s[i] !== '"') {
        if (s[i] === '\\' && i + 1 < s.length && '"\\$`\n'.includes(s[i + 1] as string)) {
          if (s[i + 1] !== '\n') word += s[i + 1];
          i += 2;
        } else {
          if (s[i] === '$' || s[i] === '`') {
            throw new RunCommandError(
              `the command uses shell expansion (${s[i]}) inside double quotes: write the value out`,
            );
          }
          word += s[i];
          i++;
        }
      }
      if (i >= s.length) throw new RunCommandError('unterminated double quote in the command');
      i++;
    } else if (c === '\\') {
      if (i + 1 < s.length) word += s[i + 1];
      i += 2;
    } else {
      if (UNSAFE.test(c)) {
        throw new RunCommandError(
          `the command contains shell syntax \`${c}\` at character ${i + 1}: give one plain launch command (no pipes, redirections, substitutions or chained commands)`,
        );
      }
      word += c;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** sbatch options that take a value (long name -> short letter, when there is one). */
const VALUED: Record<string, string | undefined> = {
  account: 'A',
  partition: 'p',
  time: 't',
  nodes: 'N',
  'gpus-per-node': undefined,
  gres: undefined,
  'job-name': 'J',
  output: 'o',
  error: 'e',
  ntasks: 'n',
  'ntasks-per-node': undefined,
  'cpus-per-task': 'c',
  'cpus-per-gpu': undefined,
  mem: undefined,
  'mem-per-gpu': undefined,
  'mem-per-cpu': undefined,
  qos: 'q',
  reservation: undefined,
  constraint: 'C',
  signal: undefined,
  chdir: 'D',
  dependency: 'd',
  array: 'a',
  'mail-type': undefined,
  'mail-user': undefined,
  comment: undefined,
  export: undefined,
  exclude: 'x',
  nodelist: 'w',
  gpus: 'G',
  begin: 'b',
  'time-min': undefined,
  wckey: undefined,
};
const SHORT = Object.fromEntries(
  Object.entries(VALUED)
    .filter(([, s]) => s)
    .map(([l, s]) => [s as string, l]),
);

function applySbatch(settings: SbatchSettings, name: string, value: string | undefined, raw: string): void {
  const int = (v: string | undefined, what: string) => {
    if (v === undefined || !/^[1-9][0-9]*$/.test(v))
      throw new RunCommandError(`sbatch option ${raw}: ${what} must be a positive whole number`);
    return Number(v);
  };
  switch (name) {
    case 'account':
      settings.account = value;
      return;
    case 'partition':
      settings.partition = value;
      return;
    case 'time':
      settings.time = value;
      return;
    case 'nodes': {
      settings.nodes = int(value?.split('-')[0], 'nodes');
      return;
    }
    case 'gpus-per-node':
      settings.gpusPerNode = int(value?.replace(/^[A-Za-z0-9_]+:/, ''), 'gpus-per-node');
      return;
    case 'gpus':
      settings.gpus = int(value?.replace(/^[A-Za-z0-9_]+:/, ''), 'gpus');
      return;
    case 'gres': {
      const m = /^gpu(?::[A-Za-z0-9_]+)?:([0-9]+)$/.exec(value ?? '');
      if (m) settings.gpusPerNode = int(m[1], 'gres gpu count');
      else settings.ignored.push(raw);
      return;
    }
    case 'exclusive':
      settings.exclusive = true;
      return;
    default:
      settings.ignored.push(raw);
  }
}

/** Parses a launch command; throws RunCommandError with a message that says what is wrong. */
export function parseRunCommand(command: string): ParsedRunCommand {
  const { cwd, rest } = leadingCd(command.trim());
  const words = splitWords(rest);
  if (words.length === 0)
    throw new RunCommandError(
      'the command is empty: pass the full AlpaSim launch command, e.g. sbatch src/tools/run-on-slurm/submit.sh deploy=ord topology=8gpu_64rollouts driver=vavam',
    );
  const { env, next } = envAssignments(words);
  const wizard = wizardInvocation(words, next);
  if (wizard) throw wizard;
  const { launcher, sbatch, scriptAt } = readLauncher(words, next);
  const script = words[scriptAt];
  if (script === undefined || script.includes('=') || script.startsWith('+')) {
    throw new RunCommandError(`the command names no submit script. ${formsText()}`);
  }
  const overrides = hydraOverrides(words.slice(scriptAt + 1), script);
  const group = requiredGroups(overrides);
  return {
    ...(cwd !== undefined ? { cwd } : {}),
    env,
    launcher,
    sbatch,
    submitScript: cwd !== undefined && !script.startsWith('/') ? joinPath(cwd, script) : script,
    overrides,
    deploy: group('deploy'),
    topology: group('topology'),
    driver: group('driver'),
  };
}

/** The leading `NAME=value` words (and an `env` after them); `next` is the first word after them. */
function envAssignments(words: readonly string[]): { env: Record<string, string>; next: number } {
  let i = 0;
  const env: Record<string, string> = {};
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] as string)) {
    const w = words[i] as string;
    env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1);
    i++;
  }
  if (words[i] === 'env') i++;
  return { env, next: i };
}

/** How the submit script is launched (sbatch with its options, bash, or directly); `scriptAt` is its word. */
function readLauncher(
  words: readonly string[],
  at: number,
): { launcher: ParsedRunCommand['launcher']; sbatch: SbatchSettings; scriptAt: number } {
  const head = words[at];
  if (head === undefined)
    throw new RunCommandError(
      'the command has only environment assignments: add the sbatch/submit.sh launch',
    );
  const base = head.split('/').pop() as string;
  const sbatch: SbatchSettings = { ignored: [] };
  if (base === 'sbatch')
    return { launcher: 'sbatch', sbatch, scriptAt: sbatchOptions(words, at + 1, sbatch) };
  if (base === 'bash' || base === 'sh') {
    let i = at + 1;
    while (i < words.length && (words[i] as string).startsWith('-')) i++;
    return { launcher: 'bash', sbatch, scriptAt: i };
  }
  return { launcher: 'direct', sbatch, scriptAt: at };
}

/** Reads sbatch's options from word `at` on into `sbatch`; returns the first word after them. */
function sbatchOptions(words: readonly string[], at: number, sbatch: SbatchSettings): number {
  let i = at;
  while (i < words.length && (words[i] as string).startsWith('-')) {
    const w = words[i] as string;
    i++;
    if (w === '--') break;
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = eq === -1 ? w.slice(2) : w.slice(2, eq);
      let value = eq === -1 ? undefined : w.slice(eq + 1);
      if (value === undefined && name in VALUED) {
        value = words[i];
        if (value === undefined) throw new RunCommandError(`sbatch option ${w} needs a value`);
        i++;
      }
      applySbatch(sbatch, name, value, value === undefined ? w : `--${name}=${value}`);
    } else {
      const letter = w[1] as string;
      const long = SHORT[letter];
      if (!long) {
        sbatch.ignored.push(w);
        continue;
      }
      let value = w.length > 2 ? w.slice(2).replace(/^=/, '') : undefined;
      if (value === undefined) {
        value = words[i];
        if (value === undefined) throw new RunCommandError(`sbatch option ${w} needs a value`);
        i++;
      }
      applySbatch(sbatch, long, value, `-${letter} ${value}`);
    }
  }
  return i;
}

/** The words after the submit script: Hydra overrides only. */
function hydraOverrides(words: readonly string[], script: string): string[] {
  for (const w of words) {
    if (!/^\+{0,2}[A-Za-z_][A-Za-z0-9_./]*=/.test(w)) {
      throw new RunCommandError(
        `unexpected argument \`${w}\` after the submit script \`${script}\`: AlpaSim takes Hydra overrides of the form key=value. ${formsText()}`,
      );
    }
  }
  return [...words];
}

/** The value of each config group AlpaSim requires; throws naming the ones missing. */
function requiredGroups(overrides: readonly string[]): (name: string) => string {
  const group = (name: string) => {
    const hit = overrides.find((o) => o.replace(/^\++/, '').startsWith(`${name}=`));
    return hit?.slice(hit.indexOf('=') + 1);
  };
  const missing = REQUIRED_GROUPS.filter((g) => !group(g));
  if (missing.length) {
    const examples: Record<string, string> = {
      deploy: 'deploy=ord',
      topology: 'topology=8gpu_64rollouts',
      driver: 'driver=vavam',
    };
    throw new RunCommandError(
      `the command is missing ${missing.map((m) => `\`${m}=…\``).join(', ')}: AlpaSim needs deploy, topology and driver (e.g. ${missing.map((m) => examples[m]).join(' ')})`,
    );
  }
  return (name) => group(name) as string;
}

/**
 * Splits off a leading `cd <dir> &&` (one plain folder, no other shell syntax): AlpaSim's changelog launches
 * `cd src/tools/run-on-slurm && sbatch … submit.sh …`. Any other `&&` is refused by splitWords.
 */
function leadingCd(command: string): { cwd?: string; rest: string } {
  const m = /^cd\s+(?:'([^']+)'|"([^"$`\\]+)"|([A-Za-z0-9_./~+-]+))\s*&&\s*(\S[\s\S]*)$/.exec(command);
  if (!m) return { rest: command };
  const dir = m[1] ?? m[2] ?? m[3]!;
  if (dir.startsWith('~'))
    throw new RunCommandError(`\`cd ${dir}\`: write the folder without ~ (topo does not expand it)`);
  return { cwd: dir, rest: m[4]! };
}

function joinPath(dir: string, file: string): string {
  const parts: string[] = [];
  for (const seg of `${dir}/${file}`.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..' && parts.length && parts.at(-1) !== '..') parts.pop();
    else parts.push(seg);
  }
  return `${dir.startsWith('/') ? '/' : ''}${parts.join('/')}`;
}
