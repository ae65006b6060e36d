import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ALICE } from '../support/clients.js';
import { get, nuevoPago, postPago } from '../support/http.js';
import { validateOpenApiDocument } from '../support/openapi-validator.js';
import { createTestDatabase } from '../support/test-database.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';

const STANDARD_MEMBERS = ['type', 'title', 'status', 'detail'];
const schemaOfSlug = (slug: string): string => `#/components/schemas/${slug.split('-').map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')}Problem`;

/** Every answer of POST /pagos in the README's table, with the problem types each status carries. */
const POST_PAGOS_PROBLEMS: Record<string, string[]> = {
  400: ['idempotency-key-invalid', 'validation-failed', 'malformed-json', 'malformed-request'],
  401: ['unauthenticated'],
  402: ['pago-rechazado'],
  409: ['orden-ya-pagada', 'orden-con-pago-en-curso', 'idempotency-key-in-flight'],
  413: ['payload-too-large'],
  415: ['unsupported-media-type'],
  422: ['idempotency-key-reused', 'importe-no-admitido'],
  429: ['rate-limited'],
  500: ['internal-error'],
  502: ['pasarela-no-disponible'],
  503: ['service-unavailable', 'shutting-down', 'procesador-sin-respuesta'],
};

// The document as the running service serves it, checked against the OpenAPI spec and the contract.
describe('the OpenAPI document (real app, real HTTP)', () => {
  let app: AppProcess;
  let document: any;

  beforeAll(async () => {
    app = await startAppProcess(await createTestDatabase('openapi'));
    const served = await get(app.baseUrl, '/docs/openapi.json');
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^application\/json/);
    document = served.json;
  });

  afterAll(async () => {
    await app?.stop();
  });

  const postPagos = () => document.paths['/pagos'].post;

  function problemTypesOf(response: any): string[] {
    return Object.values(response.content['application/problem+json'].examples).map((example: any) => example.value.type);
  }

  /** The schemas a problem response combines: one `$ref`, or `oneOf` them with a discriminator on `type`. */
  function problemSchemasOf(response: any): string[] {
    const schema = response.content['application/problem+json'].schema;
    if (schema.$ref) return [schema.$ref];
    expect(schema.discriminator.propertyName).toBe('type');
    const refs = schema.oneOf.map((part: any) => part.$ref);
    expect(Object.values(schema.discriminator.mapping).sort()).toEqual([...refs].sort());
    return refs;
  }

  const componentOf = (ref: string): any => document.components.schemas[ref.slice('#/components/schemas/'.length)];

  it('is served without a token and is a valid OpenAPI 3 document', async () => {
    expect(document.openapi).toMatch(/^3\./);
    expect(await validateOpenApiDocument(document)).toEqual({ valid: true, title: 'pagos' });
  });

  it('the validator does reject a document with a dangling $ref', async () => {
    const broken = structuredClone(document);
    delete broken.components.schemas.PagoResponse;
    expect(await validateOpenApiDocument(broken)).toEqual({ valid: false, message: expect.stringContaining('#/components/schemas/PagoResponse') });
  });

  it('GET /docs serves Swagger UI without a token, while the API still demands one', async () => {
    const ui = await get(app.baseUrl, '/docs');
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toMatch(/^text\/html/);
    expect(ui.text).toContain('swagger-ui');
    expect((await get(app.baseUrl, '/pagos')).status).toBe(401);
  });

  it('requires the Idempotency-Key header on POST /pagos and describes its format', () => {
    const key = postPagos().parameters.find((parameter: any) => parameter.name === 'Idempotency-Key');
    expect(key).toMatchObject({ in: 'header', required: true, schema: { type: 'string' } });
    expect(key.description).toMatch(/1–255 printable ASCII/);
    expect(key.description).toMatch(/quoted structured-field string/);
    expect(key.schema).toMatchObject({ minLength: 1, maxLength: 512, pattern: expect.stringContaining('{0,254}') });
    const pattern = new RegExp(key.schema.pattern);
    expect(['8e03978e-40d5-43e8-bc93-6894a57f9324', '"8e03 978e"', 'k'.repeat(255)].map((value) => pattern.test(value))).toEqual([true, true, true]);
    expect(['', 'k'.repeat(256), 'with space', '""', '"open'].map((value) => pattern.test(value))).toEqual([false, false, false, false, false]);
  });

  it('writes every pattern portably: no \\p{…} classes, valid JavaScript with and without the u flag', () => {
    const patterns: string[] = [];
    JSON.stringify(document, (key, value) => (key === 'pattern' && typeof value === 'string' ? void patterns.push(value) : value));
    expect(patterns.length).toBeGreaterThanOrEqual(4);
    for (const pattern of patterns) {
      expect(pattern).not.toMatch(/\\[pP]\{/);
      expect(() => [new RegExp(pattern), new RegExp(pattern, 'u')]).not.toThrow();
    }
    const motivo = new RegExp(document.components.schemas.CrearReembolsoDto.properties.motivo.pattern);
    expect(['producto devuelto', 'devolución 🎁', 'a\u0000b', 'a\u007fb', 'a\u0085b'].map((text) => motivo.test(text))).toEqual([true, true, false, false, false]);
  });

  it('documents the optional Prefer header (wait=N) and Preference-Applied on the 201 and the 409', () => {
    const prefer = postPagos().parameters.find((parameter: any) => parameter.name === 'Prefer');
    expect(prefer).toMatchObject({ in: 'header', required: false, schema: { type: 'string' } });
    expect(prefer.description).toMatch(/RFC 7240/);
    expect(prefer.description).toMatch(/wait=N/);
    for (const status of ['201', '409']) expect(postPagos().responses[status].headers['Preference-Applied'].description).toMatch(/wait=N/);
  });

  it('documents the 201 with the payment schema, Location, Idempotent-Replayed and Preference-Applied', () => {
    const created = postPagos().responses['201'];
    expect(created.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PagoResponse' });
    const rateLimit = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
    expect(Object.keys(created.headers).sort()).toEqual(['Idempotent-Replayed', 'Location', 'Preference-Applied', ...rateLimit, 'X-Request-Id']);
    expect(document.components.schemas.PagoResponse.properties.monto).toMatchObject({ type: 'integer', example: 1999 });
    expect(document.components.schemas.CrearPagoDto.required).toEqual(['numeroOrden', 'monto', 'moneda', 'token']);
  });

  it('documents every error status of POST /pagos as application/problem+json, each problem type with its own schema', () => {
    const responses = postPagos().responses;
    expect(Object.keys(responses).sort()).toEqual(['201', '202', ...Object.keys(POST_PAGOS_PROBLEMS)].sort());
    for (const [status, slugs] of Object.entries(POST_PAGOS_PROBLEMS)) {
      const response = responses[status];
      expect(Object.keys(response.content)).toEqual(['application/problem+json']);
      expect(problemSchemasOf(response).sort()).toEqual(slugs.map(schemaOfSlug).sort());
      expect(problemTypesOf(response).sort()).toEqual(slugs.map((slug) => `https://pagos.dev/problems/${slug}`).sort());
      for (const slug of slugs) {
        const schema = componentOf(schemaOfSlug(slug));
        expect(schema.required).toEqual(expect.arrayContaining(STANDARD_MEMBERS));
        expect([schema.properties.type.enum, schema.properties.status.enum]).toEqual([[`https://pagos.dev/problems/${slug}`], [Number(status)]]);
      }
    }
    expect(responses['409'].headers['Retry-After'].description).toContain('idempotency-key-in-flight');
    expect(responses['401'].headers).toHaveProperty('WWW-Authenticate');
    expect(componentOf(schemaOfSlug('pago-rechazado')).required).toContain('pago');
    expect(componentOf(schemaOfSlug('orden-ya-pagada')).required).toContain('pagoExistenteId');
    expect(componentOf(schemaOfSlug('idempotency-key-in-flight')).properties).not.toHaveProperty('pagoExistenteId');
    expect(componentOf(schemaOfSlug('validation-failed')).required).toContain('errors');
  });

  it('declares Idempotent-Replayed on the answers a key stores (201, 202, 402, 409, 422) and X-Request-Id on every answer of every route', () => {
    for (const status of ['201', '202', '402', '409', '422']) expect(postPagos().responses[status].headers).toHaveProperty('Idempotent-Replayed');
    for (const status of ['400', '401', '429']) expect(postPagos().responses[status].headers).not.toHaveProperty('Idempotent-Replayed');
    for (const [path, pathItem] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(pathItem)) {
        for (const [status, response] of Object.entries<any>(operation.responses)) {
          expect({ path, method, status, header: response.headers?.['X-Request-Id'] }).toEqual({ path, method, status, header: { $ref: '#/components/headers/X-Request-Id' } });
        }
      }
    }
  });

  it('documents GET /pagos/{id} (200, 404) and GET /pagos?numeroOrden=&desde=&limit= (200 array, 404 for an unknown cursor)', () => {
    const one = document.paths['/pagos/{id}'].get;
    expect(one.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PagoResponse' });
    expect(problemTypesOf(one.responses['404'])).toEqual(['https://pagos.dev/problems/pago-no-encontrado']);
    const list = document.paths['/pagos'].get;
    expect(list.responses['200'].content['application/json'].schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/PagoResponse' } });
    expect(list.parameters).toEqual(['numeroOrden', 'desde', 'limit'].map((name) => expect.objectContaining({ name, in: 'query', required: false })));
    expect(problemTypesOf(list.responses['404'])).toEqual(['https://pagos.dev/problems/cursor-de-pagos-desconocido']);
  });

  it('documents POST /pagos/{pagoId}/reembolsos: Idempotency-Key, the 201 refund with Location, and its problems', () => {
    const post = document.paths['/pagos/{pagoId}/reembolsos'].post;
    expect(post.parameters).toEqual(expect.arrayContaining([
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true }),
      expect.objectContaining({ name: 'pagoId', in: 'path', required: true }),
    ]));
    expect(post.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ReembolsoResponse' });
    expect(Object.keys(post.responses['201'].headers).sort()).toEqual(Object.keys(postPagos().responses['201'].headers).sort());
    expect(document.components.schemas.CrearReembolsoDto.required).toEqual(['monto']);
    const conflicts = ['idempotency-key-in-flight', 'pago-no-reembolsable', 'reembolso-excede-pago', 'reembolso-rechazado'];
    expect(problemTypesOf(post.responses['409']).sort()).toEqual(conflicts.map((slug) => `https://pagos.dev/problems/${slug}`));
    expect(problemSchemasOf(post.responses['409']).sort()).toEqual(conflicts.map(schemaOfSlug).sort());
    expect(problemTypesOf(post.responses['404'])).toEqual(['https://pagos.dev/problems/pago-no-encontrado']);
    expect(problemTypesOf(post.responses['422'])).toEqual(['https://pagos.dev/problems/idempotency-key-reused']);
    expect(document.components.schemas.ReembolsoExcedePagoProblem.required).toEqual([...STANDARD_MEMBERS, 'montoSolicitado', 'montoReembolsable']);
    expect(document.components.schemas.ReembolsoRechazadoProblem.required).toEqual(STANDARD_MEMBERS);
    const list = document.paths['/pagos/{pagoId}/reembolsos'].get;
    expect(list.responses['200'].content['application/json'].schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/ReembolsoResponse' } });
    expect(document.components.schemas.PagoResponse.properties.montoReembolsado).toMatchObject({ type: 'integer' });
  });

  it('declares the bearer scheme, requires it on every /pagos operation and none on the probes and the scrape', () => {
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const operation of [postPagos(), document.paths['/pagos'].get, document.paths['/pagos/{id}'].get]) {
      expect(operation.security).toEqual([{ bearer: [] }]);
    }
    for (const path of ['/health/live', '/health/ready', '/metrics']) expect(document.paths[path].get.security).toEqual([]);
  });

  it('its problem examples are what the service really answers', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(201);
    const reused = await postPago(app.baseUrl, { client: ALICE, key, body: { ...body, monto: body.monto + 1 } });
    expect(reused.json).toEqual(postPagos().responses['422'].content['application/problem+json'].examples['idempotency-key-reused'].value);
    const unauthenticated = await get(app.baseUrl, '/pagos');
    expect(unauthenticated.json).toEqual(postPagos().responses['401'].content['application/problem+json'].examples.unauthenticated.value);
  });
});
