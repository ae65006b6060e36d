import { describe, expect, it } from '@jest/globals';
import { examplesOf, httpDifferences, parseHttpAnswer, textDifferences } from '../support/readme-examples.js';

/** The rule test/e2e/readme-examples.e2e-spec.ts compares the README's answers by: what it lets vary, and what it catches. */
const SHOWN = `HTTP/1.1 201 Created
x-ratelimit-remaining: 299
location: /pagos/befcad7e-d7f3-44cf-9561-5df87cf33631

{"id":"befcad7e-d7f3-44cf-9561-5df87cf33631","numeroOrden":"ORD-71b6b606-B","montoReembolsado":0,"creadoEn":"2026-12-04T18:54:39.674Z"}`;

const served = (status: string, headers: string, body: object) => parseHttpAnswer(`${status}\r\n${headers}\r\n\r\n${JSON.stringify(body)}`);
const SAME_SHAPE = {
  id: '0e22bbaf-2ba3-4340-8703-bb1a5529da6d',
  numeroOrden: 'ORD-45e2d49f-B',
  montoReembolsado: 0,
  creadoEn: '2026-12-05T01:02:03.004Z',
};
const HEADERS = 'x-ratelimit-remaining: 12\r\nlocation: /pagos/0e22bbaf-2ba3-4340-8703-bb1a5529da6d\r\nx-request-id: anything';

describe('comparing a README answer with a served one', () => {
  it('lets ids, timestamps, order numbers and the rate-limit counters vary, and headers not shown be anything', () => {
    expect(httpDifferences(parseHttpAnswer(SHOWN), served('HTTP/1.1 201 Created', HEADERS, SAME_SHAPE))).toEqual([]);
  });

  it('catches another status, a missing header, a field not shown, a field missing and another value', () => {
    const drifted = served('HTTP/1.1 200 OK', 'x-ratelimit-remaining: 12', { ...SAME_SHAPE, montoReembolsado: 5, estado: 'APROBADO', creadoEn: undefined });
    expect(httpDifferences(parseHttpAnswer(SHOWN), drifted)).toEqual([
      'status: shown "HTTP/1.1 201 Created", served "HTTP/1.1 200 OK"',
      'header location: shown "/pagos/befcad7e-d7f3-44cf-9561-5df87cf33631", served none',
      'body.montoReembolsado: shown 0, served 5',
      'body.creadoEn: shown, not served',
      'body.estado: served ("APROBADO"), not shown',
    ]);
  });

  it('compares by shape, not by anything: an order number that is not one does not match', () => {
    const other = served('HTTP/1.1 201 Created', HEADERS, { ...SAME_SHAPE, numeroOrden: 'ORD-1001-B' });
    expect(httpDifferences(parseHttpAnswer(SHOWN), other)).toEqual(['body.numeroOrden: shown "ORD-71b6b606-B", served "ORD-1001-B"']);
  });

  it("lets a PaymentIntent's id and client secret vary, inside a line and in a body, and nothing else that starts with pi_", () => {
    const shown = 'playing the challenge: intent pi_PVw4L9oUHQhmejx1cfL3UD3f\n{"autenticacion":{"clientSecret":"pi_PVw4L9oUHQhmejx1cfL3UD3f_secret_LmtaLA1HSyp43lWCL5rKrWoOP"}}';
    const printed = 'playing the challenge: intent pi_3QxAbcDEFghij0Kl\n{"autenticacion":{"clientSecret":"pi_3QxAbcDEFghij0Kl_secret_Zk1Hq2wAbcdEfgh"}}';
    expect(textDifferences(shown, printed)).toEqual([]);
    expect(textDifferences(shown, printed.replace('intent pi_3QxAbcDEFghij0Kl', 'intent pi_'))).toHaveLength(1);
    expect(textDifferences(shown, printed.replace('_secret_Zk1Hq2wAbcdEfgh', ''))).toHaveLength(1);
  });

  it('lets a client attempt line repeat, and catches a different outcome', () => {
    const shown = 'attempt 1: no answer -> retrying in 558 ms\nattempt 2: 409 Conflict -> retrying in 1282 ms\nattempt 3: 201 Created\nkey 361d684c-80e4-4afa-ada4-7a10043058e3 forgotten';
    const twice = 'attempt 1: no answer -> retrying in 12 ms\nattempt 2: 409 Conflict -> retrying in 1000 ms\nattempt 3: 409 Conflict -> retrying in 1500 ms\nattempt 4: 201 Created\nkey 7a406818-1524-4078-90f4-3a94c102b7fb forgotten\n';
    expect(textDifferences(shown, twice)).toEqual([]);
    expect(textDifferences(shown, twice.replace('201 Created', '402 Payment Required'))).toHaveLength(1);
  });
});

describe('reading the examples', () => {
  it('pairs each sh block with the answer after it, skips illustrations, and refuses a command without its answer', () => {
    const markdown = '# T\n## API\n```sh\ncurl a\n```\n```http\nHTTP/1.1 200 OK\n```\n```http\nHTTP/1.1 409 Conflict\n```\n## Next\n```sh\nls\n```\n';
    expect(examplesOf(markdown, 'API')).toEqual([{ commands: 'curl a\n', answer: { language: 'http', text: 'HTTP/1.1 200 OK' } }]);
    expect(() => examplesOf(markdown, 'Next')).toThrow('is not followed by an http or text block');
  });
});
