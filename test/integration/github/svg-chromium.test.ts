// The record's SVG chart renders in headless Chromium as GitHub shows an image: parsed without
// error, every bar, whisker, reference line and legend entry drawn inside the picture, legend
// entries not overlapping, and user text shown as text (never markup).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { barChartSvg, OUTCOME_COLOUR } from '../../../src/chart/svg.js';
import { apply } from '../../../src/record/apply.js';
import { createRecord } from '../../../src/record/model.js';
import { recordChartSvg } from '../../../src/record/render.js';
import { EXPERIMENT, OUTCOMES } from '../../fixtures/record/scenario.js';

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

let context: BrowserContext;
beforeAll(async () => {
  context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'topo-svg-chromium-')), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_FLAGS,
  });
});
afterAll(() => context?.close());

interface Box {
  cls: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

interface Measured {
  error: string | null;
  width: number;
  height: number;
  scripts: number;
  boxes: Box[];
  texts: string[];
  fills: Array<string | null>;
}

// Runs in the page (a string: the test's TypeScript has no DOM types).
const MEASURE = `(() => {
  const root = document.documentElement;
  const error = document.querySelector('parsererror')?.textContent ?? null;
  const boxes = [];
  for (const el of root.querySelectorAll('rect.bar, path.interval, line.reference, g.legend-item, text')) {
    const b = el.getBoundingClientRect();
    boxes.push({ cls: el.getAttribute('class') ?? el.tagName, x: b.x, y: b.y, w: b.width, h: b.height });
  }
  return {
    error,
    width: root.width.baseVal.value,
    height: root.height.baseVal.value,
    scripts: root.querySelectorAll('script, foreignObject, a').length,
    boxes,
    texts: Array.from(root.querySelectorAll('text')).map((t) => t.textContent ?? ''),
    fills: Array.from(root.querySelectorAll('rect.bar')).map((r) => r.getAttribute('fill')),
  };
})()`;

/** Loads the SVG as an image document and measures what Chromium drew. */
async function measure(svg: string) {
  const page = await context.newPage();
  try {
    await page.goto(`data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`);
    return (await page.evaluate(MEASURE)) as Measured;
  } finally {
    await page.close();
  }
}

function inside(b: Box, w: number, h: number): boolean {
  return b.x >= -0.5 && b.y >= -0.5 && b.x + b.w <= w + 0.5 && b.y + b.h <= h + 0.5;
}

describe('the record chart SVG in Chromium', () => {
  it('draws bars coloured by decision, intervals, baseline and best, and a legend, all inside the picture', async () => {
    const record = OUTCOMES.reduce(apply, createRecord(EXPERIMENT));
    const svg = recordChartSvg(record);
    const m = await measure(svg);
    expect(m.error).toBeNull();
    expect(m.scripts).toBe(0);
    const bars = m.boxes.filter((b) => b.cls === 'bar');
    expect(bars.length).toBe(3);
    expect(bars.every((b) => b.h > 10)).toBe(true);
    expect(m.fills).toEqual([OUTCOME_COLOUR.accepted, OUTCOME_COLOUR.accepted, OUTCOME_COLOUR.rejected]);
    expect(m.boxes.filter((b) => b.cls === 'interval').length).toBeGreaterThan(0);
    expect(m.boxes.filter((b) => b.cls === 'reference')).toHaveLength(2);
    for (const b of m.boxes)
      expect(inside(b, m.width, m.height), `${b.cls} at ${JSON.stringify(b)}`).toBe(true);
    const legend = m.boxes.filter((b) => b.cls === 'legend-item');
    for (const [i, a] of legend.entries())
      for (const b of legend.slice(i + 1))
        expect(a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y).toBe(true);
    expect(m.texts.join('|')).toMatch(
      /accepted\|rejected\|95% interval\|baseline \(5\.3 s\)\|current best renderer-x6/,
    );
  });

  it('shows hostile names as text, and many candidates still fit', async () => {
    const bars = Array.from({ length: 14 }, (_, i) => ({
      label: i === 0 ? '<script>alert(1)</script>' : `candidate-with-a-long-name-${i}`,
      value: 3 + (i % 4) / 2,
      interval: { low: 2.8 + (i % 4) / 2, high: 3.3 + (i % 4) / 2 },
      outcome: (['accepted', 'rejected', 'failed', 'stopped', 'running'] as const)[i % 5] ?? 'running',
    }));
    const svg = barChartSvg({
      title: 'Seconds & "rollouts" <per> run',
      yLabel: 's',
      bars,
      references: [
        { name: 'base<line>', value: 3.4, kind: 'baseline' },
        { name: 'best', value: 3, kind: 'best' },
      ],
    });
    const m = await measure(svg);
    expect(m.error).toBeNull();
    expect(m.scripts).toBe(0);
    expect(m.texts).toContain('Seconds & "rollouts" <per> run');
    expect(m.texts.some((t) => t.startsWith('<script>'))).toBe(true);
    for (const b of m.boxes)
      expect(inside(b, m.width, m.height), `${b.cls} at ${JSON.stringify(b)}`).toBe(true);
    expect(barChartSvg({ title: 't', yLabel: 'y', bars: [] })).toBe('');
  });
});
