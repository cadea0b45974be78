// Types of src/setup/workflow-uses.mjs (src/setup/pins.ts imports it; scripts/release.mjs runs it unbuilt).
export declare function usesOf(text: string): { line: number; uses: string }[];
export declare const isFullSha: (ref: string) => boolean;
