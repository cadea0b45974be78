import { detect } from '../src/analysis/detector.js';
import { PROFILES, simulateTrace, truncate } from '../test/fixtures/traces/synthetic.js';
for (const p of PROFILES) {
  const tr = simulateTrace(p);
  let first: number | undefined; let val: number | undefined; let st='';
  const states: string[] = [];
  for (let t = 1; t <= 120; t += 1) {
    const v = detect({ ...truncate(tr, t) });
    if (t % 10 === 0) states.push(`${t}:${v.state}`);
    if ((v.state === 'stable' || v.state==='cyclic') && first === undefined) { first = t; val = v.value?.value; st = JSON.stringify(v.value) + ' ' + v.evidence.join(' | '); }
  }
  const at45 = tr.fullRun.filter(x=>x.t<=45).at(-1)?.v ?? NaN;
  console.log(p.name, 'final', tr.finalFullRun.toFixed(3), 'at45', at45.toFixed(3), 'stableAt', first, 'val', val?.toFixed(3), 'err%', val? (100*(val/tr.finalFullRun-1)).toFixed(2):'', 'seed45err%', (100*(at45/tr.finalFullRun-1)).toFixed(2));
  console.log('  ', states.join(' '));
  console.log('  ', st);
}
for (const p of PROFILES) {
  const tr = simulateTrace(p);
  for (const t of [45, 60, 90]) { const v = detect({ ...truncate(tr, t) }); console.log(p.name, t, v.state, v.evidence.join(' | ')); }
}
