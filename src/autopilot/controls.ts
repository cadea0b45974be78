// The dashboard's controls: /topo pause [--now], /topo resume, /topo conclude on the experiment's
// dashboard issue. Parsing apart from execution (Atlantis): `parseControl` reads one comment;
// ./state.ts folds the new ones into the bot's own state, each answered. The permission check
// itself is the one every /topo command uses (src/github/permissions.ts).
export type Control = 'pause' | 'pause-now' | 'resume' | 'conclude';

export type ParsedControl =
  | { kind: 'none' }
  | { kind: 'control'; control: Control }
  | { kind: 'invalid'; reason: string };

export const CONTROL_HELP = [
  '`/topo pause`: no new runs; running ones go on to their decision',
  '`/topo pause --now`: running ones stop too',
  '`/topo resume`: go on',
  '`/topo conclude`: conclude now with the best so far',
];

/** One dashboard comment: a control, nothing (not a /topo comment), or a polite refusal's reason. */
export function parseControl(body: string): ParsedControl {
  const text = body.replace(/\r\n?/g, '\n').trim();
  const m = /^\/topo(?=\s|$)/.exec(text);
  if (!m) return { kind: 'none' };
  const words = (text.slice(m[0].length).split('\n', 1)[0] as string).trim().split(/\s+/).filter(Boolean);
  const [word, ...rest] = words;
  const only = (control: Control) =>
    rest.length === 0
      ? ({ kind: 'control', control } as const)
      : ({
          kind: 'invalid',
          reason: `\`/topo ${word}\` takes no argument here; the dashboard takes: ${CONTROL_HELP.join('; ')}`,
        } as const);
  if (word === 'pause' && rest.length === 1 && rest[0] === '--now')
    return { kind: 'control', control: 'pause-now' };
  if (word === 'pause') return only('pause');
  if (word === 'resume') return only('resume');
  if (word === 'conclude') return only('conclude');
  return {
    kind: 'invalid',
    reason: `${word ? `\`${word.slice(0, 40)}\` is not a dashboard command` : 'no command given after /topo'}; the dashboard takes: ${CONTROL_HELP.join('; ')}`,
  };
}

export interface ControlComment {
  login: string;
  body: string;
  /** The author may run /topo commands (write, maintain or admin: decideCommandAllowed). */
  allowed: boolean;
}
