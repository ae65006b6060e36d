import { randomUUID } from 'node:crypto';
import { connect as connectSocket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type pg from 'pg';
import { ALICE } from '../support/clients.js';
import { type HttpResult, nuevoPago, postPago } from '../support/http.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';

// Real: the app in this process on a loopback port, HTTP (fetch, or bare sockets for raw bytes), PostgreSQL.
// Every property generates only requests that must be refused, except where a test states its per-case rule.
const SEED = 20261202;
const PROBLEMS = 'https://pagos.dev/problems/';
const FIELDS = ['numeroOrden', 'monto', 'moneda', 'token'];
const LIMIT_BYTES = 64 * 1024;
type Entries = [string, string][];
type Ledger = { keys: number; completed: number; charges: number };
const oneMore = ({ keys, completed, charges }: Ledger): Ledger => ({ keys: keys + 1, completed: completed + 1, charges: charges + 1 });

const check = <T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, numRuns: number, examples: [T][] = []) =>
  fc.assert(fc.asyncProperty(arbitrary, predicate), { seed: SEED, numRuns, examples });

const validEntries = (): Entries => Object.entries(nuevoPago()).map(([name, value]) => [name, JSON.stringify(value)]);
const textOf = (entries: Entries): string => `{${entries.map(([name, raw]) => `${JSON.stringify(name)}:${raw}`).join(',')}}`;

// A string that no field accepts: it always holds one character outside every field's alphabet.
const hostileString = fc
  .tuple(fc.string({ maxLength: 12 }), fc.constantFrom('\u0000', '\u202e', '\u200b', '😀', '\ud800', '\udfff', 'é', '１', ' ', '\n', '\ufeff'), fc.string({ unit: 'grapheme', maxLength: 8 }))
  .map(([before, char, after]) => JSON.stringify(before + char + after));
const notAString = fc.oneof(fc.integer().map(String), fc.constantFrom('true', 'false', 'null', '[]', '{}', '["EUR"]'), fc.json({ maxDepth: 2 }).filter((t) => /^[[{]/.test(t)));
const badMonto = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)).map(String),
  fc.integer({ max: 0 }).map(String),
  fc.bigInt({ min: 10n ** 12n + 1n, max: 10n ** 40n }).map(String),
  fc.constantFrom('1e308', '1e309', '-1e309', '9007199254740993', '-0', '"1999"', '"1e3"', 'true', 'null', '[1999]', '{"valor":1999}'),
  hostileString,
);
const badValue: Record<string, fc.Arbitrary<string>> = {
  numeroOrden: fc.oneof(notAString, hostileString, fc.constantFrom('""', JSON.stringify('O'.repeat(65)))),
  monto: badMonto,
  moneda: fc.oneof(notAString, hostileString, fc.constantFrom('"eur"', '"XYZ"', '"EURO"', '"EU"', '"ЕUR"')),
  token: fc.oneof(notAString, hostileString, fc.constantFrom('""', JSON.stringify('t'.repeat(256)))),
};
// Object.prototype's names (and `prototype`) are dropped before validation today: they have their own test below.
const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), 'prototype'];
const unknownName = fc.string({ minLength: 1, maxLength: 20 }).filter((name) => !FIELDS.includes(name) && !PROTOTYPE_NAMES.includes(name));
const defect = fc.oneof(
  fc.tuple(fc.constantFrom('replace', 'duplicate-last-invalid'), fc.constantFrom(...FIELDS)).chain(([kind, field]) => badValue[field]!.map((raw) => ({ kind, field, raw }))),
  fc.constantFrom(...FIELDS).map((field) => ({ kind: 'omit', field, raw: '' })),
  fc.tuple(unknownName, fc.json({ maxDepth: 2 })).map(([field, raw]) => ({ kind: 'unknown-field', field, raw })),
);

function spoil(entries: Entries, defects: { kind: string; field: string; raw: string }[]): Entries {
  let result = entries;
  for (const { kind, field, raw } of defects) {
    if (kind === 'replace') result = result.map(([name, value]) => [name, name === field ? raw : value]);
    if (kind === 'omit') result = result.filter(([name]) => name !== field);
    if (kind === 'duplicate-last-invalid') result = [...result, [field, entries.find(([name]) => name === field)![1]], [field, raw]];
    if (kind === 'unknown-field') result = [...result, [field, raw]];
  }
  return result;
}

describe('hostile input is always a 4xx problem that stores nothing and charges nothing (real app, real PostgreSQL)', () => {
  let app: AppProcess;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('hostile_input');
    app = await startAppProcess(url);
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
  });

  async function post(body: string | Uint8Array, headers: Record<string, string> = {}, key: string = randomUUID()): Promise<HttpResult> {
    const baseHeaders = { authorization: `Bearer ${ALICE.token}`, 'content-type': 'application/json', 'idempotency-key': key };
    const response = await fetch(`${app.baseUrl}/pagos`, { method: 'POST', headers: { ...baseHeaders, ...headers }, body });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: parseOrUndefined(text) };
  }

  function expectProblem(result: HttpResult, status?: number, slug?: string): void {
    expect(`${Math.floor(result.status / 100)}xx`).toBe('4xx');
    if (status !== undefined) expect(result.status).toBe(status);
    expect(result.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(result.json).toMatchObject({ type: expect.any(String), title: expect.any(String), status: result.status, detail: expect.any(String) });
    if (slug) expect(result.json.type).toBe(PROBLEMS + slug);
  }

  /** Keys (any status), completed keys and charges: a refused request must leave all three as they were. */
  async function ledger(): Promise<Ledger> {
    const { rows } = await db.query(`SELECT (SELECT count(*) FROM idempotency_keys)::int AS keys,
      (SELECT count(*) FROM idempotency_keys WHERE status = 'completed')::int AS completed, (SELECT count(*) FROM procesador_local.charges)::int AS charges`);
    return rows[0];
  }

  async function refusedWithoutTrace(send: () => Promise<HttpResult>, status?: number, slug?: string): Promise<void> {
    const before = await ledger();
    expectProblem(await send(), status, slug);
    expect(await ledger()).toEqual(before);
  }

  it('a body with wrong types, out-of-range or fractional amounts, hostile unicode, missing or unknown fields is a 400 validation problem', async () => {
    await check(fc.array(defect, { minLength: 1, maxLength: 3 }), async (defects) => {
      await refusedWithoutTrace(() => post(textOf(spoil(validEntries(), defects))), 400, 'validation-failed');
    }, 200);
  });

  it('text or bytes that are not a JSON object are a 400 problem', async () => {
    const notAnObject = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.uint8Array({ minLength: 1, maxLength: 200 }),
      fc.nat().map((cut) => { const text = textOf(validEntries()); return text.slice(0, cut % (text.length - 1)); }),
      fc.json({ maxDepth: 2 }).map((text) => `${text}}garbage`),
      fc.constantFrom('null', '123', '"x"', 'true', '{"monto":1999,}', "{'monto':1999}", '{"monto":NaN}', '{"monto":0x7CF}', '{"a":"\u0000"}', '\ufeff{'),
    );
    await check(notAnObject, async (body) => {
      await refusedWithoutTrace(() => post(body), 400);
    }, 150);
  });

  it('deeply nested JSON under the size limit is a 400 problem, never a 500', async () => {
    const nesting = fc.record({ depth: fc.integer({ min: 2, max: 10_000 }), open: fc.constantFrom('[', '{"a":'), where: fc.constantFrom('body', 'monto', 'unknown-field') });
    await check(nesting, async ({ depth, open, where }) => {
      const deep = open.repeat(depth) + (open === '[' ? '' : '1') + (open === '[' ? ']' : '}').repeat(depth);
      const entries = validEntries();
      const body = where === 'body' ? deep : textOf(where === 'monto' ? spoil(entries, [{ kind: 'replace', field: 'monto', raw: deep }]) : [...entries, ['x', deep]]);
      expect(Buffer.byteLength(body)).toBeLessThan(LIMIT_BYTES);
      await refusedWithoutTrace(() => post(body), 400);
    }, 40, [[{ depth: 5_000, open: '[', where: 'unknown-field' }]]);
  });

  it('prototype keys (__proto__, constructor, ...) are unknown fields: a 400 problem, and Object.prototype stays untouched', async () => {
    const prototypeNames = Object.getOwnPropertyNames(Object.prototype).sort();
    const value = fc.constantFrom('{"polluted":true}', '{"prototype":{"polluted":true}}', '{"monto":5}', 'null', '[1]', '"x"', '1');
    const pollution = fc.record({ name: fc.constantFrom(...PROTOTYPE_NAMES), value, where: fc.constantFrom('top-level', 'inside token') });
    await check(pollution, async ({ name, value, where }) => {
      const entries = validEntries();
      const polluted = where === 'top-level' ? [...entries, [name, value] as [string, string]] : spoil(entries, [{ kind: 'replace', field: 'token', raw: `{"${name}":${value}}` }]);
      await refusedWithoutTrace(() => post(textOf(polluted)), 400, 'validation-failed');
      expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeNames);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }, 60, [[{ name: '__proto__', value: '{"polluted":true}', where: 'top-level' }], [{ name: 'constructor', value: '{"prototype":{"polluted":true}}', where: 'top-level' }]]);
  });

  it('a body over 64 kB, up to 1 MB, sent plain or gzip-inflating past the limit, is a 413 problem', async () => {
    const oversize = fc.record({ bytes: fc.integer({ min: LIMIT_BYTES + 1, max: 1024 * 1024 }), shape: fc.constantFrom('padding field', 'whitespace', 'array', 'gzip') });
    await check(oversize, async ({ bytes, shape }) => {
      const body = shape === 'padding field' ? textOf([...validEntries(), ['relleno', JSON.stringify('x'.repeat(bytes))]])
        : shape === 'array' ? `[${'1999,'.repeat(Math.ceil(bytes / 5))}1]` : textOf(validEntries()) + ' '.repeat(bytes);
      const send = shape === 'gzip' ? () => post(gzipSync(body), { 'content-encoding': 'gzip' }) : () => post(body);
      await refusedWithoutTrace(send, 413);
    }, 24);
  });

  it('a valid body under a non-JSON content type or a non-UTF charset is a 415 problem', async () => {
    const contentType = fc.oneof(
      fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'text/json', 'application/vnd.api+json', '*/*', ''),
      fc.stringMatching(/^[a-z]{1,12}\/[a-z0-9.+-]{1,20}$/).filter((type) => type !== 'application/json'),
      fc.constantFrom('latin1', 'iso-8859-1', 'ascii', 'koi8-r', 'utf-7x', 'foo').map((charset) => `application/json; charset=${charset}`),
    );
    await check(contentType, async (type) => {
      await refusedWithoutTrace(() => post(textOf(validEntries()), { 'content-type': type }), 415);
    }, 100);
  });

  /** POSTs the header values byte for byte (latin1) over a bare socket: fetch refuses control bytes in them. */
  function postRaw(headers: Record<string, string>, body: string): Promise<{ responses: number; result: HttpResult }> {
    const lines = ['POST /pagos HTTP/1.1', 'Host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
    const request = `${[...lines, `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connectSocket(Number(new URL(app.baseUrl).port), '127.0.0.1', () => socket.write(Buffer.from(request, 'latin1')));
      const timer = setTimeout(() => socket.destroy(new Error('no answer within 5 s')), 5_000);
      socket.on('data', (chunk: Buffer) => chunks.push(chunk)).on('error', reject).on('close', () => {
        clearTimeout(timer);
        const raw = Buffer.concat(chunks).toString('utf8');
        const [head = '', text = ''] = raw.split(/\r\n\r\n(.*)/s);
        const [statusLine = '', ...headerLines] = head.split('\r\n');
        const parsed = new Headers(headerLines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]));
        resolve({ responses: raw.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0, result: { status: Number(statusLine.split(' ')[1]), headers: parsed, text, json: parseOrUndefined(text) } });
      });
    });
  }
  const headersWith = (key: string): Record<string, string> => ({ Authorization: `Bearer ${ALICE.token}`, 'Content-Type': 'application/json', 'Idempotency-Key': key, 'X-Trace': 'trace-0001' });

  const printable = fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code));
  it('an empty, over-long, non-ASCII, spaced or malformed quoted Idempotency-Key is a 400 problem even with a valid body', async () => {
    const invalidKey = fc.oneof(
      fc.constantFrom('', ' ', '\t', '""', '"', '"\\"', '"a\\qb"', '"a"b"', '"a", "b"', '"a";p=1', 'a b', '"ab\u00e9c"'),
      fc.string({ unit: printable, minLength: 256, maxLength: 4_000 }).map((key) => `k${key}`),
      fc.integer({ min: 256, max: 1_000 }).map((length) => `"${'q'.repeat(length)}"`),
      fc.tuple(fc.string({ unit: printable, minLength: 1, maxLength: 40 }), fc.constantFrom(' ', '\t', '\u00a0', 'ñ', '\u00ff', '\u0080')).map(([key, char]) => `k${key}${char}${key}`),
      fc.string({ unit: printable, maxLength: 40 }).filter((key) => !key.includes('"')).map((key) => `"${key}`),
    );
    await check(invalidKey, async (key) => {
      await refusedWithoutTrace(() => post(textOf(validEntries()), {}, key), 400, 'idempotency-key-invalid');
    }, 150);
  });

  it('an Idempotency-Key of any byte shape either runs once and replays, or is refused (400, or 422 for a reused key) storing and charging nothing', async () => {
    // Header bytes are sent as latin1 chars: the UTF-8 bytes of emoji and RTL marks arrive as sent.
    const utf8 = fc.constantFrom('😀', '\u202e', 'é', '\ufeff').map((char) => Buffer.from(char, 'utf8').toString('latin1'));
    const unit = fc.oneof(fc.constantFrom('"', '\\', ',', ';', '=', ' ', ':', '\t'), utf8, fc.integer({ min: 0, max: 255 }).filter((c) => c !== 10 && c !== 13).map((c) => String.fromCharCode(c)));
    await check(fc.string({ unit, maxLength: 300 }), async (key) => {
      const before = await ledger();
      const body = textOf(validEntries());
      const { result: first } = await postRaw(headersWith(key), body);
      const after = await ledger();
      if (first.status === 201) {
        expect(after).toEqual(oneMore(before));
        const { result: retry } = await postRaw(headersWith(key), body);
        expect([retry.status, retry.text, retry.headers.get('idempotent-replayed')]).toEqual([201, first.text, 'true']);
      } else {
        // 422: fast-check repeats short keys, and a repeated key with a new body is a mismatch.
        expect([400, 422]).toContain(first.status);
        expectProblem(first);
        expect(after).toEqual(before);
      }
    }, 150);
  });

  it('CR, LF, NUL and control bytes injected into a header over a raw socket get one 4xx problem and no stored key or charge', async () => {
    const injection = fc.oneof(
      fc.integer({ min: 0, max: 31 }).filter((c) => c !== 9).map((c) => String.fromCharCode(c)),
      fc.constantFrom('\x7f', '\r\nnocolon', '\r\n folded', '\r\n\tfolded', '\r\nTransfer-Encoding: chunked', '\r\nContent-Length: 1'),
      fc.string({ unit: printable, minLength: 1, maxLength: 20 }).filter((v) => !/["\\]/.test(v)).map((value) => `\r\nIdempotency-Key: ${value}`),
    );
    const attack = fc.record({ header: fc.constantFrom('Idempotency-Key', 'Authorization', 'Content-Type', 'X-Trace'), quotedKey: fc.boolean(), at: fc.nat(), injection });
    await check(attack, async ({ header, quotedKey, at, injection }) => {
      const headers = headersWith(quotedKey ? `"${randomUUID()}"` : randomUUID());
      const value = headers[header]!;
      headers[header] = value.slice(0, at % (value.length + 1)) + injection + value.slice(at % (value.length + 1));
      const before = await ledger();
      const { responses, result } = await postRaw(headers, textOf(validEntries()));
      expect(responses).toBe(1);
      expectProblem(result);
      expect(await ledger()).toEqual(before);
    }, 150);
  });

  it('two Idempotency-Key header lines are a 400 that stores nothing, even when Node joins them into one valid quoted key', async () => {
    const key = randomUUID();
    const before = await ledger();
    // Sent as `Idempotency-Key: "<uuid>` and `Idempotency-Key: second"`; Node joins them as `"<uuid>, second"`.
    const { result } = await postRaw(headersWith(`"${key}\r\nIdempotency-Key: second"`), textOf(validEntries()));
    expectProblem(result, 400, 'idempotency-key-invalid');
    expect(await ledger()).toEqual(before);
  });

  it('after all of the above the service still charges a valid request once and replays it', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const before = await ledger();
    const [first, replay] = [await postPago(app.baseUrl, { client: ALICE, key, body }), await postPago(app.baseUrl, { client: ALICE, key, body })];
    expect([first.status, replay.status, replay.text, replay.headers.get('idempotent-replayed')]).toEqual([201, 201, first.text, 'true']);
    expect(await ledger()).toEqual(oneMore(before));
  });
});

function parseOrUndefined(text: string): any {
  try { return JSON.parse(text); } catch { return undefined; }
}
