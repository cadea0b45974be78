// What the demo shows while it runs: one row per candidate. In a terminal the table is redrawn in
// place; in a pipe or CI log each change becomes one plain line, so the log reads top to bottom.

/** The demo's view of one candidate at one moment. */
export interface CandidateRow {
  name: string;
  /** Computed candidate state: queued, submitted, starting, warming, stabilising, stable, failed, … */
  state: string;
  /** Run-minutes simulated so far (time-scaled on the twin). */
  simulatedMinutes: number | null;
  /** Current full-run seconds per rollout. */
  secondsPerRollout: number | null;
  /** The detector's verdict once it has one (e.g. `stable 41.2 s`, `better than baseline`). */
  verdict: string | null;
}

const HEADERS = ['candidate', 'state', 'sim min', 's/rollout', 'verdict'] as const;

function cells(row: CandidateRow): string[] {
  return [
    row.name,
    row.state,
    row.simulatedMinutes === null ? '-' : row.simulatedMinutes.toFixed(1),
    row.secondsPerRollout === null ? '-' : row.secondsPerRollout.toFixed(2),
    row.verdict ?? '-',
  ];
}

/** The table as text lines (no ANSI codes), columns padded to the widest cell. */
export function renderTable(title: string, rows: readonly CandidateRow[]): string[] {
  const body = rows.map(cells);
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [title, line(HEADERS), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)];
}

/** One plain log line per row that changed in a way worth a line (state, verdict, or a new minute). */
export function changeLines(previous: readonly CandidateRow[], next: readonly CandidateRow[]): string[] {
  const before = new Map(previous.map((r) => [r.name, r]));
  const lines: string[] = [];
  for (const row of next) {
    const old = before.get(row.name);
    const minuteTicked =
      row.simulatedMinutes !== null &&
      Math.floor(row.simulatedMinutes / 5) !== Math.floor((old?.simulatedMinutes ?? -5) / 5);
    if (old && old.state === row.state && old.verdict === row.verdict && !minuteTicked) continue;
    const parts = [`${row.name}: ${row.state}`];
    if (row.simulatedMinutes !== null) parts.push(`${row.simulatedMinutes.toFixed(1)} sim min`);
    if (row.secondsPerRollout !== null) parts.push(`${row.secondsPerRollout.toFixed(2)} s/rollout`);
    if (row.verdict) parts.push(`verdict: ${row.verdict}`);
    lines.push(parts.join(', '));
  }
  return lines;
}

/** Writes the live view: redrawn in place on a terminal, line by line otherwise. */
export class LiveView {
  private drawnLines = 0;
  private rows: CandidateRow[] = [];

  constructor(
    private readonly write: (text: string) => void,
    private readonly tty: boolean,
  ) {}

  /** A message above the table (terminal) or a plain log line. */
  log(message: string): void {
    if (this.tty) {
      this.clear();
      this.write(`${message}\n`);
      this.drawnLines = 0;
    } else {
      this.write(`${message}\n`);
    }
  }

  /** Shows the new rows under a title ("round 1: 3 candidates"). */
  update(title: string, rows: readonly CandidateRow[]): void {
    if (this.tty) {
      this.clear();
      const lines = renderTable(title, rows);
      this.write(`${lines.join('\n')}\n`);
      this.drawnLines = lines.length;
    } else {
      for (const line of changeLines(this.rows, rows)) this.write(`${line}\n`);
    }
    this.rows = rows.map((r) => ({ ...r }));
  }

  /** Leaves the last table on screen and starts a fresh one below it. */
  freeze(): void {
    this.drawnLines = 0;
    this.rows = [];
  }

  private clear(): void {
    // Cursor up one line and erase it, once per line drawn last time.
    if (this.drawnLines > 0) this.write('\u001b[1A\u001b[2K'.repeat(this.drawnLines) + '\r');
  }
}
