import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ALICE } from '../support/clients.js';
import { get, nuevoPago, postPago } from '../support/http.js';
import { validateOpenApiDocument } from '../support/openapi-validator.js';
import { createTestDatabase } from '../support/test-database.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';

const PROBLEM_REF = '#/components/schemas/Problem';

/** Every answer of POST /pagos in the README's table, with the problem types each status carries. */
const POST_PAGOS_PROBLEMS: Record<string, string[]> = {
  400: ['idempotency-key-invalid', 'validation-failed', 'malformed-json', 'malformed-request'],
  401: ['unauthenticated'],
  402: ['pago-rechazado'],
  409: ['orden-ya-pagada', 'orden-con-pago-en-curso', 'idempotency-key-in-flight'],
  413: ['payload-too-large'],
  415: ['unsupported-media-type'],
  422: ['idempotency-key-reused'],
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

  it('is served without a token and is a valid OpenAPI 3 document', async () => {
    expect(document.openapi).toMatch(/^3\./);
    expect(await validateOpenApiDocument(document)).toEqual({ valid: true, title: 'pagos' });
  });

  it('the validator does reject a document with a dangling $ref', async () => {
    const broken = structuredClone(document);
    delete broken.components.schemas.Problem;
    expect(await validateOpenApiDocument(broken)).toEqual({ valid: false, message: expect.stringContaining('#/components/schemas/Problem') });
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
    expect(Object.keys(created.headers).sort()).toEqual(['Idempotent-Replayed', 'Location', 'Preference-Applied']);
    expect(document.components.schemas.PagoResponse.properties.monto).toMatchObject({ type: 'integer', example: 1999 });
    expect(document.components.schemas.CrearPagoDto.required).toEqual(['numeroOrden', 'monto', 'moneda', 'token']);
  });

  it('documents every error status of POST /pagos as application/problem+json with the Problem schema and each problem type', () => {
    const responses = postPagos().responses;
    expect(Object.keys(responses).sort()).toEqual(['201', ...Object.keys(POST_PAGOS_PROBLEMS)].sort());
    for (const [status, slugs] of Object.entries(POST_PAGOS_PROBLEMS)) {
      const response = responses[status];
      expect(Object.keys(response.content)).toEqual(['application/problem+json']);
      const schema = response.content['application/problem+json'].schema;
      expect(schema.$ref ?? schema.allOf.map((part: any) => part.$ref)).toContain(PROBLEM_REF);
      expect(problemTypesOf(response).sort()).toEqual(slugs.map((slug) => `https://pagos.dev/problems/${slug}`).sort());
    }
    expect(responses['409'].headers['Retry-After'].description).toContain('idempotency-key-in-flight');
    expect(responses['401'].headers).toHaveProperty('WWW-Authenticate');
    expect(document.components.schemas.Problem.required).toEqual(['type', 'title', 'status', 'detail']);
    expect(document.components.schemas.PagoRechazadoProblem.required).toEqual(['pago']);
    expect(document.components.schemas.OrdenEnConflictoProblem.required).toEqual(['pagoExistenteId']);
  });

  it('documents GET /pagos/{id} (200, 404) and GET /pagos?numeroOrden= (200 array)', () => {
    const one = document.paths['/pagos/{id}'].get;
    expect(one.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PagoResponse' });
    expect(problemTypesOf(one.responses['404'])).toEqual(['https://pagos.dev/problems/pago-no-encontrado']);
    const list = document.paths['/pagos'].get;
    expect(list.responses['200'].content['application/json'].schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/PagoResponse' } });
    expect(list.parameters).toEqual([expect.objectContaining({ name: 'numeroOrden', in: 'query', required: false })]);
  });

  it('documents POST /pagos/{pagoId}/reembolsos: Idempotency-Key, the 201 refund with Location, and its problems', () => {
    const post = document.paths['/pagos/{pagoId}/reembolsos'].post;
    expect(post.parameters).toEqual(expect.arrayContaining([
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true }),
      expect.objectContaining({ name: 'pagoId', in: 'path', required: true }),
    ]));
    expect(post.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ReembolsoResponse' });
    expect(Object.keys(post.responses['201'].headers).sort()).toEqual(['Idempotent-Replayed', 'Location', 'Preference-Applied']);
    expect(document.components.schemas.CrearReembolsoDto.required).toEqual(['monto']);
    expect(problemTypesOf(post.responses['409']).sort()).toEqual(
      ['idempotency-key-in-flight', 'pago-no-reembolsable', 'reembolso-excede-pago', 'reembolso-rechazado'].map((slug) => `https://pagos.dev/problems/${slug}`),
    );
    expect(problemTypesOf(post.responses['404'])).toEqual(['https://pagos.dev/problems/pago-no-encontrado']);
    expect(problemTypesOf(post.responses['422'])).toEqual(['https://pagos.dev/problems/idempotency-key-reused']);
    expect(document.components.schemas.ReembolsoExcedePagoProblem.required).toEqual(['montoSolicitado', 'montoReembolsable']);
    const list = document.paths['/pagos/{pagoId}/reembolsos'].get;
    expect(list.responses['200'].content['application/json'].schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/ReembolsoResponse' } });
    expect(document.components.schemas.PagoResponse.properties.montoReembolsado).toMatchObject({ type: 'integer' });
  });

  it('declares the bearer scheme and requires it on every /pagos operation', () => {
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const operation of [postPagos(), document.paths['/pagos'].get, document.paths['/pagos/{id}'].get]) {
      expect(operation.security).toEqual([{ bearer: [] }]);
    }
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
