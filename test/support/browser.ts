import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_PATH } from './requirements.js';

/**
 * The machine has no network: everything Chromium would fetch on its own (updates, sync, field
 * trials, safe browsing lists, QUIC probes) is switched off, so a page can only reach what it asks for.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox', // as root, Chromium's sandbox refuses to start
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where failing browser tests leave their screenshots (gitignored). */
export const TEST_OUTPUT_DIR = path.resolve('test-results');

export interface Browser {
  readonly page: Page;
  /** Every URL the page requested, in order: what a test checks for CDN or third-party fetches. */
  readonly requestedUrls: readonly string[];
  /** Runs `step`; when it throws, writes a full-page screenshot to `<dir>/<name>.png` before rethrowing. */
  screenshotOnFailure<T>(name: string, step: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Debian's Chromium (`CHROMIUM_PATH`) driven by playwright-core, in a fresh profile that `close()`
 * deletes. Screenshots go to `TEST_OUTPUT_DIR/<outputName>/`.
 */
export async function launchBrowser(outputName: string): Promise<Browser> {
  const profile = await mkdtemp(path.join(tmpdir(), 'pagos-chromium-'));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  const requestedUrls: string[] = [];
  context.on('request', (request) => requestedUrls.push(request.url()));
  const page = context.pages()[0] ?? (await context.newPage());
  const screenshots = path.join(TEST_OUTPUT_DIR, outputName);
  return {
    page,
    requestedUrls,
    async screenshotOnFailure(name, step) {
      try {
        return await step();
      } catch (error) {
        await mkdir(screenshots, { recursive: true });
        const file = path.join(screenshots, `${name}.png`);
        await page.screenshot({ path: file, fullPage: true });
        const failure = error instanceof Error ? error : new Error(String(error));
        // Jest prints the stack, which holds the message as it was when the error was made.
        const note = `screenshot: ${path.relative(process.cwd(), file)}`;
        failure.stack = failure.stack?.replace(failure.message, `${failure.message}\n${note}`);
        failure.message += `\n${note}`;
        throw failure;
      }
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
