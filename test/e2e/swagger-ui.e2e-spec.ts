import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Locator } from 'playwright-core';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { launchBrowser, type Browser } from '../support/browser.js';
import { ALICE } from '../support/clients.js';
import { get, nuevoPago } from '../support/http.js';
import { CHROMIUM, describeWhenAvailable } from '../support/requirements.js';
import { createTestDatabase } from '../support/test-database.js';

/**
 * `/docs` as a person uses it: Debian's Chromium (playwright-core) opens Swagger UI on the built
 * service, authorizes with a token and sends a payment with Try it out, twice. Real: the browser,
 * the service process, HTTP, PostgreSQL. A failing step leaves a screenshot in
 * test-results/swagger-ui/. Without Chromium the file is skipped with a line saying so, except under CI.
 */
describeWhenAvailable(CHROMIUM, 'Swagger UI at /docs in a real browser', () => {
  let app: AppProcess;
  let browser: Browser;

  beforeAll(async () => {
    app = await startAppProcess(await createTestDatabase('swagger_ui'));
    browser = await launchBrowser('swagger-ui');
    await browser.page.goto(`${app.baseUrl}/docs`);
  });

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  });

  const page = () => browser.page;
  const postPagos = () => page().locator('#operations-pagos-crearPago');
  const liveResponse = () => postPagos().locator('.live-responses-table .response').first();
  // Swagger UI's live answer: "Response body" (a highlighted block), then "Response headers" (a <pre>).
  const headersOf = (response: Locator) => response.locator('div:has(> h5:text-is("Response headers")) > pre');

  async function expectLiveAnswer(response: Locator, status: string): Promise<{ body: any; headers: string }> {
    await expect(response.locator('.response-col_status').innerText()).resolves.toBe(status);
    const body = JSON.parse(await response.locator('.highlight-code pre.microlight').innerText());
    const headers = await headersOf(response).innerText();
    return { body, headers };
  }

  it('renders POST /pagos with the Idempotency-Key header parameter and its 201, 409 and 422 answers', async () => {
    await browser.screenshotOnFailure('renders-post-pagos', async () => {
      await postPagos().locator('.opblock-summary').click();
      const key = postPagos().locator('tr[data-param-name="Idempotency-Key"][data-param-in="header"]');
      await expect(key.locator('.parameter__name').innerText()).resolves.toMatch(/^Idempotency-Key\s*\*$/);
      const documented = await postPagos().locator('.responses-table tr.response').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-code')));
      expect(documented).toEqual(expect.arrayContaining(['201', '409', '422']));
    });
  });

  it('Authorize, then Try it out with a body and a key: the page shows the 201 and the payment; Execute again shows the replay', async () => {
    const key = randomUUID();
    const pago = nuevoPago();
    await browser.screenshotOnFailure('try-it-out', async () => {
      await page().locator('button.authorize').first().click();
      await page().locator('.modal-ux input#auth-bearer-value').fill(ALICE.token);
      await page().locator('.modal-ux button.authorize').click();
      await page().locator('.modal-ux button.btn-done').click();

      await postPagos().locator('.try-out__btn').click();
      await postPagos().locator('tr[data-param-name="Idempotency-Key"] input').fill(key);
      await postPagos().locator('textarea.body-param__text').fill(JSON.stringify(pago));
      await postPagos().locator('button.execute').click();
      const first = await expectLiveAnswer(liveResponse(), '201');
      const { token, ...stored } = pago;
      expect(first.body).toMatchObject({ ...stored, estado: 'APROBADO', id: expect.any(String) });
      expect(JSON.stringify(first.body)).not.toContain(token);
      expect(first.headers).not.toMatch(/idempotent-replayed/i);

      // Swagger UI swaps the answer in place: wait for the one of the second request.
      await postPagos().locator('button.execute').click();
      await headersOf(liveResponse()).filter({ hasText: /idempotent-replayed: true/i }).waitFor();
      const replay = await expectLiveAnswer(liveResponse(), '201');
      expect(replay.body).toEqual(first.body);
    });
    const payments = await get(app.baseUrl, `/pagos?numeroOrden=${pago.numeroOrden}`, ALICE);
    expect(payments.json).toHaveLength(1);
  });

  it('fetches nothing from anywhere but the service (its Swagger UI assets are served locally)', () => {
    const origins = new Set(browser.requestedUrls.map((url) => new URL(url).origin));
    expect([...origins]).toEqual([app.baseUrl]);
  });

  it('a failing step leaves a screenshot of the page under test-results/', async () => {
    await rm('test-results/swagger-ui/deliberate-failure.png', { force: true });
    await expect(browser.screenshotOnFailure('deliberate-failure', () => Promise.reject(new Error('deliberate')))).rejects.toThrow(
      /deliberate\nscreenshot: test-results\/swagger-ui\/deliberate-failure\.png/,
    );
    const png = await readFile('test-results/swagger-ui/deliberate-failure.png');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
  });
});
