// Command-line options of every `topo` subcommand: one parser, strict about unknown options.
import { UsageError } from './command.js';

export interface ParsedArgs {
  flags: Set<string>;
  values: Map<string, string>;
  positional: string[];
}

/** `--flag`, `--name value`, `--name=value` and positionals; unknown options are usage errors. */
export function parseArgs(
  args: readonly string[],
  flags: readonly string[],
  valued: readonly string[],
): ParsedArgs {
  const out: ParsedArgs = { flags: new Set(), values: new Map(), positional: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      out.positional.push(...args.slice(i + 1));
      break;
    }
    if (!a.startsWith('--')) {
      out.positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq === -1 ? a.slice(2) : a.slice(2, eq);
    if (flags.includes(name) && eq === -1) out.flags.add(name);
    else if (valued.includes(name)) {
      const value = eq === -1 ? args[++i] : a.slice(eq + 1);
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      out.values.set(name, value);
    } else throw new UsageError(`unknown option ${a}`);
  }
  return out;
}
