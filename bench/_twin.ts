import { detect } from '../src/analysis/detector.js';
import { twinTrace } from '../test/fixtures/traces/twin.js';
import { truncate } from '../test/fixtures/traces/synthetic.js';
const cases = [
  { profile: 'twin-balanced', preset: '8gpu_64rollouts' },
  { profile: 'twin-renderer-bound', preset: '8gpu_64rollouts' },
  { profile: 'twin-driver-bound', preset: '8gpu_12rollouts' },
  { profile: 'twin-cyclic', preset: '8gpu_64rollouts' },
  { profile: 'twin-balanced', preset: '2gpu' },
];
for (const c of cases) {
  const t0 = Date.now();
  const tr = twinTrace({ ...c, seed: 1 });
  const ms = Date.now() - t0;
  let first: number | undefined; let val = NaN;
  const states: string[] = [];
  for (let t = 1; t <= tr.endMinutes; t += 1) {
    const v = detect(truncate(tr, t));
    if (t % 15 === 0 && t <= 120) states.push(`${t}:${v.state}`);
    if (first === undefined && (v.state === 'stable' || v.state === 'cyclic')) { first = t; val = v.value?.value ?? NaN; }
    if (first !== undefined && t > 130) break;
  }
  const at45 = tr.fullRun.filter((x) => x.t <= 45).at(-1)?.v ?? NaN;
  console.log(tr.profile.name, `sim ${ms}ms`, 'end', tr.endMinutes.toFixed(0), 'final', tr.finalFullRun.toFixed(3), 'steady', tr.profile.steadySeconds.toFixed(3), 'stableAt', first, 'err%', (100 * (val / tr.finalFullRun - 1)).toFixed(2), 'seed45err%', (100 * (at45 / tr.finalFullRun - 1)).toFixed(2));
  console.log('   ', states.join(' '));
}
