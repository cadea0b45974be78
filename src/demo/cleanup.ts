// The demo leaves nothing running: every thing it starts registers how to stop it here, and the
// steps run last-in first-out when the demo ends, fails or is interrupted (SIGINT/SIGTERM).

export interface CleanupStep {
  label: string;
  run: () => Promise<void> | void;
}

export class Cleanup {
  private steps: CleanupStep[] = [];
  private running: Promise<void> | null = null;

  /** Registers a step; the returned function removes it (once the thing stopped by itself). */
  add(label: string, run: CleanupStep['run']): () => void {
    const step = { label, run };
    this.steps.push(step);
    return () => {
      this.steps = this.steps.filter((s) => s !== step);
    };
  }

  /** Labels of the steps still pending, newest first (what would be left running). */
  pending(): string[] {
    return this.steps.map((s) => s.label).reverse();
  }

  /** Runs every step once, newest first; a failing step is reported and the others still run. */
  runAll(log: (message: string) => void): Promise<void> {
    this.running ??= (async () => {
      while (this.steps.length > 0) {
        const step = this.steps.pop()!;
        log(`cleanup: ${step.label}`);
        try {
          await step.run();
        } catch (error) {
          log(`cleanup: ${step.label} failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    })();
    return this.running;
  }
}

/** Exit code of a process ended by a signal (128 + signal number). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 1;
}

/**
 * Calls `onSignal` on the first SIGINT/SIGTERM (the caller aborts and cleans up); a second
 * signal calls `onSecond` (give up waiting). Returns the uninstaller.
 */
export function onTermination(
  onSignal: (signal: NodeJS.Signals) => void,
  onSecond: (signal: NodeJS.Signals) => void,
): () => void {
  let seen = false;
  const handler = (signal: NodeJS.Signals) => {
    if (seen) onSecond(signal);
    else {
      seen = true;
      onSignal(signal);
    }
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
