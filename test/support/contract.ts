import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { HttpResult } from './http.js';

/**
 * Every answer a pagos service gives the tests, checked against the OpenAPI document that service
 * serves: the status is documented for the route, every header is declared (and required ones sent),
 * the body has a documented media type and matches its schema (Ajv on the document's own schemas).
 * Only services that `startAppProcess` registered are checked: the local processor, proxies and
 * anything else on another origin are not pagos and are left alone. The document is fetched once
 * per test file (Jest gives each file its own modules) from the first service started.
 */

const DOCUMENT_PATH = '/docs/openapi.json';
const DOCUMENT_ID = 'pagos-openapi.json';
// What HTTP/1.1 itself puts on an answer; an API document has nothing to say about them.
const TRANSPORT_HEADERS = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);
// Swagger UI and the document describe the contract; they are not part of it.
const DOCUMENTATION_PATHS = /^\/docs(?:\/|$)/;

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const services = new Set<string>();
const violations: string[] = [];
let contract: Promise<Contract> | undefined;

/** From now on, answers from `baseUrl` (a pagos service) are checked; loads the document if this file has none yet. */
export async function checkAnswersOf(baseUrl: string): Promise<void> {
  services.add(new URL(baseUrl).origin);
  contract ??= loadContract(baseUrl).catch((error: unknown) => {
    contract = undefined;
    throw error;
  });
  await contract;
}

/** Throws, naming every difference, when an answer of a registered service drifts from its document. */
export async function checkAnswer(url: string, method: string, answer: HttpResult): Promise<void> {
  const { origin, pathname } = new URL(url);
  if (!services.has(origin) || !contract) return;
  const found = (await contract).violationsOf(method, pathname, answer);
  if (found.length === 0) return;
  const message = `${method} ${pathname} answered ${answer.status}, which the OpenAPI document does not allow:\n- ${found.join('\n- ')}`;
  violations.push(message);
  throw new Error(message);
}

/** The violations found since the last call (a test that swallowed the error still fails: see contract-setup.ts). */
export function takeViolations(): string[] {
  return violations.splice(0);
}

async function loadContract(baseUrl: string): Promise<Contract> {
  const response = await fetch(`${baseUrl}${DOCUMENT_PATH}`);
  if (response.status !== 200) throw new Error(`${DOCUMENT_PATH} answered ${response.status}`);
  return new Contract(await response.json());
}

interface Route {
  readonly pattern: RegExp;
  readonly pointer: string[];
  readonly operations: Record<string, any>;
}

/** The checks, on one parsed document. Exported for the test that shows they catch drift. */
export class Contract {
  private readonly ajv = addFormats(new Ajv({ strict: false, allErrors: true, validateSchema: false }));
  private readonly routes: Route[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: any) {
    this.ajv.addSchema(document, DOCUMENT_ID);
    // As the service's router: case-insensitive, with or without a trailing slash.
    this.routes = Object.entries<Record<string, any>>(document.paths).map(([template, operations]) => ({
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}/?$`, 'i'),
      pointer: ['paths', template],
      operations,
    }));
  }

  violationsOf(method: string, path: string, answer: HttpResult): string[] {
    const route = this.routes.find(({ pattern }) => pattern.test(path));
    const operation = route?.operations[method.toLowerCase()];
    if (!route || !operation) {
      // No such route: the service's 404 is all there is to say. Anything else is a route the document lacks.
      if (DOCUMENTATION_PATHS.test(path) || answer.status === 404) return [];
      return [`the document has no operation ${method} ${path}`];
    }
    const status = [String(answer.status), `${String(answer.status)[0]}XX`, 'default'].find((key) => key in operation.responses);
    if (!status) return [`status ${answer.status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`];
    const response = operation.responses[status];
    const pointer = [...route.pointer, method.toLowerCase(), 'responses', status];
    return [...this.headerViolations(response, answer), ...this.bodyViolations(response, pointer, answer)];
  }

  private headerViolations(response: any, answer: HttpResult): string[] {
    const declared = new Map<string, any>(Object.entries<any>(response.headers ?? {}).map(([name, header]) => [name.toLowerCase(), this.resolve(header)]));
    const found: string[] = [];
    for (const [name, header] of declared) {
      const value = answer.headers.get(name);
      if (value === null) {
        if (header.required) found.push(`required header ${name} is missing`);
        continue;
      }
      const validate = this.ajv.compile(header.schema ?? {});
      const typed = ['integer', 'number'].includes(header.schema?.type) && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
      if (!validate(typed)) found.push(`header ${name}: ${JSON.stringify(value)} ${this.ajv.errorsText(validate.errors)}`);
    }
    answer.headers.forEach((_value, name) => {
      if (!TRANSPORT_HEADERS.has(name) && !declared.has(name)) found.push(`header ${name} is not declared on this answer`);
    });
    return found;
  }

  private bodyViolations(response: any, pointer: string[], answer: HttpResult): string[] {
    if (!response.content) return answer.text === '' ? [] : [`a body was sent where none is documented: ${answer.text.slice(0, 200)}`];
    const mediaType = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!(mediaType in response.content)) return [`content type ${JSON.stringify(mediaType)} is not documented (documented: ${Object.keys(response.content).join(', ')})`];
    const isJson = /^application\/(?:[\w.-]+\+)?json$/.test(mediaType);
    if (isJson && answer.json === undefined) return [`the ${mediaType} body is not JSON: ${answer.text.slice(0, 200)}`];
    const validate = this.validatorAt([...pointer, 'content', mediaType, 'schema']);
    return validate(isJson ? answer.json : answer.text) ? [] : [`body: ${this.ajv.errorsText(validate.errors, { separator: '; ' })} in ${answer.text.slice(0, 300)}`];
  }

  private validatorAt(pointer: string[]): ValidateFunction {
    const ref = `${DOCUMENT_ID}#/${pointer.map((segment) => encodeURIComponent(segment.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/')}`;
    let validate = this.validators.get(ref);
    if (!validate) this.validators.set(ref, (validate = this.ajv.compile({ $ref: ref })));
    return validate;
  }

  private resolve(object: any): any {
    if (!object?.$ref) return object;
    return (object.$ref as string).slice(2).split('/').reduce((node: any, segment) => node[segment.replaceAll('~1', '/').replaceAll('~0', '~')], this.document);
  }
}
