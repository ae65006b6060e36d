import { describe, expect, it } from '@jest/globals';
import {
  BadRequestException,
  HttpException,
  HttpStatus,
  InternalServerErrorException,
  NotFoundException,
  PayloadTooLargeException,
} from '@nestjs/common';
import { IdempotencyKeyInFlightError } from '../../src/idempotency/idempotency.errors.js';
import { PROBLEM_TYPE_BASE, ProblemException, renderProblem } from '../../src/problems/problem.js';

/** Pure mapping of a thrown value to a problem+json answer; no app, no filter, no HTTP. */
const TEAPOT = { slug: 'teapot-refused', title: 'Teapot refused', status: HttpStatus.I_AM_A_TEAPOT };

describe('renderProblem: a ProblemException', () => {
  it('renders type = PROBLEM_TYPE_BASE + slug, title, status, detail, extensions and headers', () => {
    const error = new ProblemException(TEAPOT, 'Brew coffee elsewhere.', { hint: 'kettle', tries: 2 }, { 'Retry-After': '5' });
    expect(renderProblem(error)).toEqual({
      status: 418,
      body: { type: 'https://pagos.dev/problems/teapot-refused', title: 'Teapot refused', status: 418, detail: 'Brew coffee elsewhere.', hint: 'kettle', tries: 2 },
      headers: { 'Retry-After': '5' },
    });
    expect(PROBLEM_TYPE_BASE).toBe('https://pagos.dev/problems/');
  });

  it('without extensions or headers renders only the four members and no headers', () => {
    const rendered = renderProblem(new ProblemException(TEAPOT, 'No.'));
    expect(Object.keys(rendered.body).sort()).toEqual(['detail', 'status', 'title', 'type']);
    expect(rendered.headers).toEqual({});
  });

  it('is still an HttpException with the definition status, so Nest treats it as expected', () => {
    const error = new ProblemException(TEAPOT, 'No.');
    expect(error).toBeInstanceOf(HttpException);
    expect(error.getStatus()).toBe(418);
  });

  it('a module subclass renders its own definition and headers (in-flight key: 409 with Retry-After)', () => {
    const rendered = renderProblem(new IdempotencyKeyInFlightError());
    expect(rendered.status).toBe(409);
    expect(rendered.body.type).toBe(`${PROBLEM_TYPE_BASE}idempotency-key-in-flight`);
    expect(rendered.body.status).toBe(rendered.status);
    expect(rendered.headers).toEqual({ 'Retry-After': '1' });
  });
});

describe('renderProblem: a plain Nest HttpException keeps its status with a problem body', () => {
  it('NotFoundException becomes a 404 "Not found" problem carrying its message', () => {
    expect(renderProblem(new NotFoundException('Cannot GET /nada'))).toEqual({
      status: 404,
      body: { type: `${PROBLEM_TYPE_BASE}not-found`, title: 'Not found', status: 404, detail: 'Cannot GET /nada' },
      headers: {},
    });
  });

  it('PayloadTooLargeException becomes a 413 "Payload too large" problem', () => {
    const rendered = renderProblem(new PayloadTooLargeException());
    expect(rendered.status).toBe(413);
    expect(rendered.body).toMatchObject({ type: `${PROBLEM_TYPE_BASE}payload-too-large`, title: 'Payload too large', status: 413 });
    expect(rendered.body.detail).toEqual(expect.any(String));
  });

  it('a list of messages (as from a validation pipe) is joined into one detail', () => {
    const rendered = renderProblem(new BadRequestException(['monto must be positive', 'moneda must be ISO 4217']));
    expect(rendered.status).toBe(400);
    expect(rendered.body.detail).toBe('monto must be positive; moneda must be ISO 4217');
  });

  it('a string response is the detail', () => {
    expect(renderProblem(new HttpException('Slow down', HttpStatus.TOO_MANY_REQUESTS)).body).toMatchObject({
      status: 429,
      title: 'Too many requests',
      detail: 'Slow down',
    });
  });

  it('a status Nest has no name for keeps its number with the generic title "Error"', () => {
    const rendered = renderProblem(new HttpException('Client closed', 499));
    expect(rendered.status).toBe(499);
    expect(rendered.body).toMatchObject({ type: `${PROBLEM_TYPE_BASE}error`, title: 'Error', status: 499 });
  });

  it('a 5xx HttpException keeps its status but not its message', () => {
    const rendered = renderProblem(new InternalServerErrorException('relation "pagos" does not exist'));
    expect(rendered.status).toBe(500);
    expect(rendered.body.detail).toBe('The request failed on our side.');
    expect(JSON.stringify(rendered)).not.toContain('pagos" does not exist');
  });
});

describe('renderProblem: anything else becomes a 500 that leaks nothing', () => {
  it.each([
    ['an Error', new Error('duplicate key value violates unique constraint "pagos_pkey" password=hunter2')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'hunter2')")],
    ['a thrown string', 'hunter2 in a string'],
    ['a thrown object', { message: 'hunter2 in an object', stack: 'at hunter2' }],
    ['undefined', undefined],
  ])('%s becomes a 500 internal-error problem without its message or stack', (_name, thrown) => {
    const rendered = renderProblem(thrown);
    expect(rendered).toEqual({
      status: 500,
      body: {
        type: `${PROBLEM_TYPE_BASE}internal-error`,
        title: 'Internal error',
        status: 500,
        detail: 'The request failed on our side. Retry it with the same Idempotency-Key.',
      },
      headers: {},
    });
    expect(JSON.stringify(rendered)).not.toContain('hunter2');
  });
});
