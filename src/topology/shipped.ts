// What comes with the installed version of alpasim-topo rather than with the adopting repository:
// the presets (topologies/presets), the Prometheus rules and the Grafana dashboard (telemetry/).
// An action runs from <package>/actions/<name>/dist/index.js and the CLI from <package>/dist/topo.js,
// so both find them by walking up from their own file, never from the caller's checkout.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The alpasim-topo folder this code runs from: the nearest one up holding topologies/presets. */
export function shippedRoot(from: string = dirname(fileURLToPath(import.meta.url))): string | undefined {
  let dir = resolve(from);
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'topologies', 'presets'))) return dir;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}
