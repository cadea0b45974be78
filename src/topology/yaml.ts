// Line-mapped YAML loading: the `yaml` package keeps every node's source range, so any finding
// (a schema error's JSON pointer, a semantic rule's key path) can be mapped back to file:line:column.
// Hostile or broken input is refused with an Issue, never a crash.
import {
  type Document,
  isAlias,
  isCollection,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  type Pair,
  parseAllDocuments,
  type YAMLError,
} from 'yaml';
import { formatKeyPath, type Issue, type PathSegment } from './issues.js';

/** Files larger than this are refused before parsing. */
export const MAX_YAML_BYTES = 256 * 1024;
/** Nesting deeper than this is refused (topology files nest 5 levels; deep nesting only exhausts the stack). */
export const MAX_YAML_DEPTH = 32;
/** Alias expansions allowed per document: enough for `&gpus [0,1]`/`*gpus` reuse, far below a "billion laughs". */
export const MAX_YAML_ALIASES = 50;

export interface Position {
  line: number;
  column: number;
}

export interface LoadedYaml {
  file: string;
  /** The plain data, or undefined when the file was refused (then `issues` says why). */
  value: unknown;
  /** Loader findings (all errors). */
  issues: Issue[];
  /** Position of the node at `path`; with `key: true` the position of its key. Falls back to the deepest existing parent. */
  locate(path: readonly PathSegment[], options?: { key?: boolean }): Position;
  /** True when the node at `path` exists in the file (as opposed to coming from a default or a preset). */
  has(path: readonly PathSegment[]): boolean;
}

export function loadYaml(text: string, file: string): LoadedYaml {
  const early = refusedBeforeParsing(text, file);
  if (early) return early;
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: false, strict: true });
  const pos = (offset: number): Position => {
    const p = lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };
  // parseAllDocuments returns an EmptyStream (an empty array) for a file with no document at all.
  if (!Array.isArray(docs) || docs.length === 0) {
    return refused(
      file,
      'empty-file',
      'the file is empty: write the keys the schema asks for (see docs/topology.md)',
    );
  }
  if (docs.length > 1) {
    const second = docs[1] as Document.Parsed;
    return refused(
      file,
      'multi-document',
      `the file holds ${docs.length} YAML documents (separated by \`---\`); one file is one document: split it into separate files or remove the extra \`---\``,
      pos(second.range[0]),
    );
  }
  const doc = docs[0] as Document.Parsed;
  const locate = (path: readonly PathSegment[], options?: { key?: boolean }) =>
    locateNode(doc, path, options?.key ?? false, pos);
  const has = (path: readonly PathSegment[]) => (path.length === 0 ? true : doc.hasIn(path as PathSegment[]));
  const base = { file, locate, has };
  const syntax = syntaxIssues(doc, text, file, pos);
  if (syntax.length) return { ...base, value: undefined, issues: syntax };
  const shape = shapeIssues(doc, file, pos, locate);
  if (shape.length) return { ...base, value: undefined, issues: shape };
  return { ...base, ...plainValue(doc, file) };
}

/** A file refused as a whole, with one issue. */
function refused(
  file: string,
  rule: string,
  message: string,
  pos: Position = { line: 1, column: 1 },
): LoadedYaml {
  return {
    file,
    value: undefined,
    issues: [{ rule, severity: 'error', file, line: pos.line, column: pos.column, keyPath: '', message }],
    locate: () => ({ line: 1, column: 1 }),
    has: () => false,
  };
}

/** Too large or not text: refused before the parser sees it. */
function refusedBeforeParsing(text: string, file: string): LoadedYaml | undefined {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_YAML_BYTES) {
    return refused(
      file,
      'file-too-large',
      `the file is ${(bytes / 1024).toFixed(0)} KiB; files over ${MAX_YAML_BYTES / 1024} KiB are refused (a topology file is a few hundred bytes): keep only the topology keys`,
    );
  }
  if (text.includes('\u0000')) {
    return refused(file, 'yaml-syntax', 'the file contains NUL bytes: it is not a text YAML file');
  }
  return undefined;
}

/** The parser's errors and warnings: duplicate keys, too deep, or a syntax error (an unclosed quote where it opened). */
function syntaxIssues(
  doc: Document.Parsed,
  text: string,
  file: string,
  pos: (offset: number) => Position,
): Issue[] {
  return [...doc.errors, ...doc.warnings].map((err): Issue => {
    // An error at the end of the file (an unclosed bracket) is reported at the last line with content.
    let offset = err.pos[0];
    if (text.slice(offset).trim() === '') offset = Math.max(0, text.trimEnd().length - 1);
    const path = pathAtOffset(doc.contents, err.pos[0]);
    // an unclosed quote is found where the file ends; the person needs where it opened
    const opened = unclosedQuoteAt(doc, err, path);
    const at = { file, ...pos(opened ?? offset), keyPath: formatKeyPath(path) };
    if (err.code === 'DUPLICATE_KEY') {
      const key = String(path[path.length - 1] ?? text.slice(err.pos[0], err.pos[1]).trim());
      return {
        rule: 'duplicate-key',
        severity: 'error',
        ...at,
        message: `the key \`${key}\` appears twice in the same mapping; YAML would keep only one value and silently lose the other: keep one`,
      };
    }
    if (err.code === 'RESOURCE_EXHAUSTION') {
      return {
        rule: 'yaml-too-deep',
        severity: 'error',
        ...at,
        message: `the YAML is too deeply nested to parse (${firstLine(err.message)}); a topology file nests about 5 levels: remove the extra nesting`,
      };
    }
    return {
      rule: 'yaml-syntax',
      severity: 'error',
      ...at,
      message:
        opened === undefined
          ? `YAML syntax error: ${firstLine(err.message)} (${err.code}); fix the YAML so it parses`
          : `YAML syntax error: the quote opened here is never closed (the parser read on to ${text.slice(err.pos[0]).trim() === '' ? 'the end of the file' : `line ${pos(err.pos[0]).line}`}); close it on this line`,
    };
  });
}

/** A document that parsed but is not one to read: empty, nested too deep, or with keys that are not strings. */
function shapeIssues(
  doc: Document.Parsed,
  file: string,
  pos: (offset: number) => Position,
  locate: LoadedYaml['locate'],
): Issue[] {
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    return refused(file, 'empty-file', emptyMessage()).issues;
  }
  const deep = tooDeep(doc.contents);
  if (deep) {
    return refused(
      file,
      'yaml-too-deep',
      `the YAML nests deeper than ${MAX_YAML_DEPTH} levels; a topology file nests about 5: remove the extra nesting`,
      deep.range ? pos(deep.range[0]) : undefined,
    ).issues;
  }
  return [...pairsOf(doc.contents, [])].flatMap(({ pair, path }): Issue[] => {
    const key = pair.key;
    if (isScalar(key) && typeof key.value === 'string') return [];
    const keyNode = key as Node | null;
    const at = keyNode?.range ? pos(keyNode.range[0]) : locate(path);
    const shown = isScalar(key) ? String(key.value) : isAlias(key) ? `*${key.source}` : 'a collection';
    const kind = isScalar(key)
      ? key.value === null
        ? 'null'
        : typeof key.value
      : isAlias(key)
        ? 'alias'
        : 'collection';
    return [
      {
        rule: 'non-string-key',
        severity: 'error',
        file,
        ...at,
        keyPath: formatKeyPath(path),
        message: `the key \`${shown}\` is a ${kind}, not a string; every key here is a name from the schema: write it as a plain name${kind === 'number' || kind === 'boolean' ? ` (or quote it: "${shown}")` : ''}`,
      },
    ];
  });
}

/** The document as plain data, with aliases expanded up to MAX_YAML_ALIASES. */
function plainValue(doc: Document.Parsed, file: string): { value: unknown; issues: Issue[] } {
  try {
    return { value: doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }), issues: [] };
  } catch (error) {
    return {
      value: undefined,
      issues: refused(
        file,
        'alias-limit',
        `YAML aliases expand too much (${firstLine(String((error as Error).message))}); at most ${MAX_YAML_ALIASES} alias expansions are allowed: write the values out instead of nesting anchors`,
      ).issues,
    };
  }
}

function emptyMessage(): string {
  return 'the file has no content (only comments or whitespace): write the keys the schema asks for (see docs/topology.md)';
}

function firstLine(text: string): string {
  return text.split('\n')[0]?.trim() ?? text;
}

/** The first node nested deeper than MAX_YAML_DEPTH, found without recursion (the input may be hostile). */
function tooDeep(root: unknown): Node | undefined {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (depth > MAX_YAML_DEPTH) return node as Node;
    if (isMap(node))
      for (const pair of node.items) stack.push([pair.key, depth + 1], [pair.value, depth + 1]);
    else if (isSeq(node)) for (const item of node.items) stack.push([item, depth + 1]);
  }
  return undefined;
}

/** Every map pair in the tree with the key path of the map that holds it. */
function* pairsOf(node: unknown, path: PathSegment[]): Generator<{ pair: Pair; path: PathSegment[] }> {
  if (isMap(node)) {
    for (const pair of node.items) {
      yield { pair, path };
      const key = isScalar(pair.key) ? String(pair.key.value) : '?';
      yield* pairsOf(pair.value, [...path, key]);
    }
  } else if (isSeq(node)) {
    for (let i = 0; i < node.items.length; i++) yield* pairsOf(node.items[i], [...path, i]);
  }
}

/** The key path of the deepest node whose range contains `offset`. */
function pathAtOffset(node: unknown, offset: number, path: PathSegment[] = []): PathSegment[] {
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = pair.key as Node | null;
      const value = pair.value as Node | null;
      const start = key?.range?.[0] ?? value?.range?.[0];
      const end = value?.range?.[2] ?? key?.range?.[2];
      if (start === undefined || end === undefined) continue;
      if (offset >= start && offset <= end) {
        const name = isScalar(key) ? String(key.value) : '?';
        return pathAtOffset(value, offset, [...path, name]);
      }
    }
  } else if (isSeq(node)) {
    for (let i = 0; i < node.items.length; i++) {
      const item = node.items[i] as Node | null;
      if (item?.range && offset >= item.range[0] && offset <= item.range[2])
        return pathAtOffset(item, offset, [...path, i]);
    }
  }
  return path;
}

function locateNode(
  doc: Document.Parsed,
  path: readonly PathSegment[],
  wantKey: boolean,
  pos: (offset: number) => Position,
): Position {
  let node: unknown = doc.contents;
  let best: Position =
    isCollection(node) || isScalar(node) ? pos((node as Node).range?.[0] ?? 0) : { line: 1, column: 1 };
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    const last = i === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) return best;
      const key = pair.key as Node;
      const value = pair.value as Node | null;
      if (key.range) best = pos(key.range[0]);
      if (last && wantKey) return best;
      // A block mapping or list as the value starts on the next line, and an empty value (`gpus:`)
      // has no node of its own: in both cases the key is where a person looks.
      const blockCollection = isCollection(value) && !value.flow;
      const emptyValue = isScalar(value) && value.value === null && value.range?.[0] === value.range?.[1];
      if (value?.range && !blockCollection && !emptyValue) best = pos(value.range[0]);
      node = value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg] as Node | undefined;
      if (!item?.range) return best;
      best = pos(item.range[0]);
      node = item;
    } else {
      return best;
    }
  }
  return best;
}

/** Where the quoted scalar opens when `err` is a missing closing quote, else undefined. */
function unclosedQuoteAt(doc: Document, err: YAMLError, path: readonly PathSegment[]): number | undefined {
  if (err.code !== 'MISSING_CHAR' || !/quote/i.test(err.message) || path.length === 0) return undefined;
  const node = doc.getIn(path as PathSegment[], true);
  return isScalar(node) && node.range && node.range[0] < err.pos[0] ? node.range[0] : undefined;
}
