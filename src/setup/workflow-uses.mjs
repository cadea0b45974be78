// The one reader of a workflow's `uses:` lines. Plain JavaScript so that scripts/release.mjs (run by node
// from the source tree, unbuilt) and src/setup/pins.ts (bundled into the CLI) read a workflow alike:
// what the release script refuses to tag is what `topo setup` and `topo doctor` refuse to pin.

const USES = /^\s*(?:-\s+)?uses:\s*["']?([^\s"'#]+)/;

/**
 * The `uses:` of a workflow's text that name another repository, as written, with their 1-based line:
 * local ones (`./…`), docker images and commented-out lines are not read.
 * @param {string} text
 * @returns {{ line: number, uses: string }[]}
 */
export function usesOf(text) {
  const out = [];
  text.split('\n').forEach((line, i) => {
    const uses = USES.exec(line)?.[1];
    if (uses && !uses.startsWith('./') && !uses.startsWith('docker://')) out.push({ line: i + 1, uses });
  });
  return out;
}

/** Whether a ref is a full 40-hex commit SHA (the only ref that cannot move). */
export const isFullSha = (/** @type {string} */ ref) => /^[0-9a-f]{40}$/.test(ref);
