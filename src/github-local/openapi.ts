// GitHub's OpenAPI description (@octokit/openapi, api.github.com, with $refs) turned into a route
// table and Ajv validators for requests and responses. OpenAPI 3.0 quirks are handled here:
// `nullable: true` becomes `anyOf: [null, …]`, GitHub's custom formats are accepted, and schema
// keywords JSON Schema does not know (`example`, `discriminator`, `x-github`, …) are ignored.
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { packageFile } from './package-file.js';

// ajv-formats is CommonJS: its default export arrives wrapped in some module modes.
const addFormats = ((addFormatsImport as unknown as { default?: unknown }).default ?? addFormatsImport) as (
  ajv: Ajv,
) => Ajv;

type Json = Record<string, unknown>;

export interface Operation {
  method: string;
  /** The path template as in the description, e.g. `/repos/{owner}/{repo}/pulls/{pull_number}`. */
  template: string;
  operationId: string;
  regex: RegExp;
  paramNames: string[];
  /** Literal segments: more literal routes win over templated ones. */
  literalCount: number;
  spec: Json;
}

export interface RouteMatch {
  operation: Operation;
  pathParams: Record<string, string>;
}

const SPEC_DOC_ID = 'https://api.github.com/openapi.json';

/** Escapes one JSON-pointer segment. */
function pointer(...segments: string[]): string {
  return segments.map((s) => s.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
}

/** Rewrites OpenAPI 3.0 `nullable` into JSON Schema; skips example payloads (they are data). */
function normaliseNullable(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) normaliseNullable(item);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const obj = node as Json;
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'example' || key === 'examples') continue;
    normaliseNullable(value);
  }
  if (obj.nullable === true) {
    const inner: Json = {};
    for (const [key, value] of Object.entries(obj)) {
      if (key !== 'nullable' && key !== 'description') inner[key] = value;
      delete obj[key];
    }
    obj.anyOf = [{ type: 'null' }, inner];
  } else if (obj.nullable === false) {
    delete obj.nullable;
  }
}

export class OpenApiValidator {
  readonly doc: Json;
  readonly operations: Operation[] = [];
  private readonly ajv: Ajv;
  private readonly ajvCoerce: Ajv;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor() {
    const file = packageFile('@octokit/openapi', 'generated/api.github.com.json');
    this.doc = JSON.parse(readFileSync(file, 'utf8')) as Json;
    normaliseNullable(this.doc.components);
    normaliseNullable(this.doc.paths);
    normaliseNullable(this.doc['x-webhooks']);
    this.ajv = this.newAjv(false);
    this.ajvCoerce = this.newAjv(true);
    this.buildRoutes();
  }

  private newAjv(coerceTypes: boolean): Ajv {
    const ajv = new Ajv({
      strict: false,
      allErrors: true,
      validateSchema: false,
      coerceTypes: coerceTypes ? 'array' : false,
    });
    addFormats(ajv);
    // GitHub's own format names: documentation, not constraints JSON Schema can check.
    for (const format of ['int32', 'int64', 'double', 'repo.nwo', 'binary', 'timestamp']) {
      ajv.addFormat(format, true);
    }
    ajv.addSchema(this.doc, SPEC_DOC_ID);
    return ajv;
  }

  private buildRoutes(): void {
    const paths = this.doc.paths as Record<string, Record<string, Json>>;
    for (const [template, item] of Object.entries(paths)) {
      for (const [method, spec] of Object.entries(item)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        const paramNames: string[] = [];
        const segments = template.split('/');
        let literalCount = 0;
        const parts = segments.map((segment, index) => {
          const m = /^\{(.+)\}$/.exec(segment);
          if (!m) {
            literalCount++;
            return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          }
          const name = m[1] as string;
          paramNames.push(name);
          // A trailing `{path}` or `{ref}` may hold slashes (contents paths, `heads/main`).
          const last = index === segments.length - 1;
          return last && (name === 'path' || name === 'ref') ? '(.+)' : '([^/]+)';
        });
        this.operations.push({
          method: method.toUpperCase(),
          template,
          operationId: String(spec.operationId),
          regex: new RegExp(`^${parts.join('/')}$`),
          paramNames,
          literalCount,
          spec,
        });
      }
    }
    this.operations.sort((a, b) => b.literalCount - a.literalCount);
  }

  match(method: string, path: string): RouteMatch | undefined {
    for (const operation of this.operations) {
      if (operation.method !== method) continue;
      const m = operation.regex.exec(path);
      if (!m) continue;
      const pathParams: Record<string, string> = {};
      operation.paramNames.forEach((name, i) => {
        pathParams[name] = decodeURIComponent(m[i + 1] as string);
      });
      return { operation, pathParams };
    }
    return undefined;
  }

  private resolve(node: Json): Json {
    let current = node;
    while (typeof current.$ref === 'string') {
      const segments = current.$ref.replace(/^#\//, '').split('/');
      let target: unknown = this.doc;
      for (const s of segments) {
        target = (target as Json)[s.replaceAll('~1', '/').replaceAll('~0', '~')];
      }
      current = target as Json;
    }
    return current;
  }

  private validatorFor(key: string, ref: string, coerce: boolean): ValidateFunction {
    const cacheKey = `${coerce}:${key}`;
    let fn = this.cache.get(cacheKey);
    if (!fn) {
      fn = (coerce ? this.ajvCoerce : this.ajv).compile({ $ref: `${SPEC_DOC_ID}#/${ref}` });
      this.cache.set(cacheKey, fn);
    }
    return fn;
  }

  /**
   * Checks path and query parameters and the JSON body. Returns problems in words; an empty
   * list means the real API would accept the request's shape.
   */
  validateRequest(
    match: RouteMatch,
    query: URLSearchParams,
    body: unknown,
    hasBody: boolean,
  ): { problems: string[]; query: Record<string, unknown> } {
    const problems: string[] = [];
    const coercedQuery: Record<string, unknown> = {};
    const params = (match.operation.spec.parameters as Json[] | undefined) ?? [];
    params.forEach((original, index) => {
      const checked = this.checkParameter(match, query, original, index);
      if (checked.problem) problems.push(checked.problem);
      if (checked.query) coercedQuery[checked.query.name] = checked.query.value;
    });
    problems.push(...this.checkBody(match.operation, body, hasBody));
    return { problems, query: coercedQuery };
  }

  /** One path or query parameter against its schema: a problem in words, and a query value coerced. */
  private checkParameter(
    match: RouteMatch,
    query: URLSearchParams,
    original: Json,
    index: number,
  ): { problem?: string; query?: { name: string; value: unknown } } {
    const param = this.resolve(original);
    const name = String(param.name);
    const where = param.in;
    if (where !== 'path' && where !== 'query') return {};
    const raw = where === 'path' ? match.pathParams[name] : (query.get(name) ?? undefined);
    if (raw === undefined)
      return param.required === true ? { problem: `missing required ${where} parameter "${name}"` } : {};
    const { operation } = match;
    const schemaRef =
      typeof original.$ref === 'string'
        ? `${original.$ref.slice(2)}/schema`
        : pointer(
            'paths',
            operation.template,
            operation.method.toLowerCase(),
            'parameters',
            String(index),
            'schema',
          );
    const validate = this.parameterValidator(schemaRef);
    const holder = { value: raw as unknown };
    const problem = validate(holder)
      ? undefined
      : `${where} parameter "${name}"=${JSON.stringify(raw)}: ${formatErrors(validate.errors)}`;
    return { problem, query: where === 'query' ? { name, value: holder.value } : undefined };
  }

  /** A parameter's validator, coercing the text of a path or query into the schema's type. */
  private parameterValidator(schemaRef: string): ValidateFunction {
    const cacheKey = `param:${schemaRef}`;
    let validate = this.cache.get(cacheKey);
    if (!validate) {
      validate = this.ajvCoerce.compile({
        type: 'object',
        properties: { value: { $ref: `${SPEC_DOC_ID}#/${schemaRef}` } },
      });
      this.cache.set(cacheKey, validate);
    }
    return validate;
  }

  /** The JSON body against the operation's documented request body (or its absence). */
  private checkBody(operation: Operation, body: unknown, hasBody: boolean): string[] {
    const requestBody = operation.spec.requestBody
      ? this.resolve(operation.spec.requestBody as Json)
      : undefined;
    if (!requestBody) {
      const takesNone = hasBody && operation.method !== 'GET' && operation.method !== 'DELETE';
      return takesNone ? ['a body was sent to an operation that takes none'] : [];
    }
    const content = requestBody.content as Record<string, Json> | undefined;
    const json = content?.['application/json'];
    if (!hasBody) return requestBody.required === true ? ['missing required JSON body'] : [];
    if (!json?.schema) return [];
    const ref = pointer(
      'paths',
      operation.template,
      operation.method.toLowerCase(),
      'requestBody',
      'content',
      'application/json',
      'schema',
    );
    const validate = this.validatorFor(`req:${operation.operationId}`, ref, false);
    return validate(body) ? [] : [`body: ${formatErrors(validate.errors)}`];
  }

  /** Checks a response the server is about to send against the documented one for the status. */
  validateResponse(operation: Operation, status: number, body: unknown): string[] {
    const responses = operation.spec.responses as Record<string, Json>;
    const documented = responses[String(status)];
    if (!documented) {
      // The real API returns undocumented error statuses too; an undocumented success is a bug.
      if (status >= 400) return [];
      return [`status ${status} is not documented for ${operation.operationId}`];
    }
    const resolved = this.resolve(documented);
    const content = resolved.content as Record<string, Json> | undefined;
    if (!content?.['application/json']?.schema) {
      return body === undefined ? [] : [`status ${status} of ${operation.operationId} has no body`];
    }
    const base =
      typeof documented.$ref === 'string'
        ? documented.$ref.slice(2).split('/')
        : ['paths', operation.template, operation.method.toLowerCase(), 'responses', String(status)];
    const ref = pointer(...base, 'content', 'application/json', 'schema');
    const validate = this.validatorFor(`res:${operation.operationId}:${status}`, ref, false);
    if (validate(body)) return [];
    return [`response ${status}: ${formatErrors(validate.errors)}`];
  }

  /**
   * Checks a webhook payload against the description's `x-webhooks` entry (e.g.
   * `issue-comment-created`); returns problems in words.
   */
  validateWebhook(name: string, payload: unknown): string[] {
    const hooks = this.doc['x-webhooks'] as Record<string, unknown>;
    if (!hooks[name]) return [`no webhook ${name} in the OpenAPI description`];
    const ref = pointer('x-webhooks', name, 'post', 'requestBody', 'content', 'application/json', 'schema');
    const validate = this.validatorFor(`hook:${name}`, ref, false);
    return validate(payload) ? [] : [`webhook ${name}: ${formatErrors(validate.errors)}`];
  }

  /** A documented example payload (a deep copy): the base of every object the server returns. */
  example(name: string): Json {
    const examples = (this.doc.components as Json).examples as Record<string, Json>;
    const example = examples[name];
    if (!example) throw new Error(`no example named ${name} in the OpenAPI description`);
    return structuredClone(example.value) as Json;
  }
}

function formatErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 8)
    .map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`)
    .join('; ');
}

let shared: OpenApiValidator | undefined;
/** Loading and indexing the description takes a moment: one instance per process. */
export function openApi(): OpenApiValidator {
  shared ??= new OpenApiValidator();
  return shared;
}
