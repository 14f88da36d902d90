/**
 * Opens an HTML report in the system Chromium (Debian's `chromium`, driven by playwright-core
 * through `executablePath`: no browser download) and reads what a reader would see: which charts
 * rendered and with how many marks, what the page printed on the console, any request it tried
 * to make off the file system, and a screenshot. Used by test/reportBrowser.test.ts and by the
 * README screenshot script (readmeScreenshot.ts).
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- page callbacks run in the browser; the harness compiles without DOM typings */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

/** The Chromium binary: `PODSIM_CHROMIUM`, else Debian's. */
export const CHROMIUM = process.env.PODSIM_CHROMIUM ?? '/usr/bin/chromium';

/** Starts Chromium, or throws saying how to install it (CI installs it in .ci/run). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y --no-install-recommends chromium (or set PODSIM_CHROMIUM)`);
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
}

/** One chart as rendered: its id, whether the page drew it, and its marks (Plot's `g[aria-label]` groups → shape counts, over every facet). */
export interface RenderedChart {
  readonly id: string;
  readonly rendered: boolean;
  readonly svgs: number;
  readonly marks: Record<string, number>;
}

export interface OpenedReport {
  readonly charts: readonly RenderedChart[];
  /** The chart data the page embeds (by chart id or data-key). */
  readonly data: Record<string, unknown>;
  readonly consoleErrors: readonly string[];
  /** Requests other than file:// and data: (there should be none). */
  readonly network: readonly string[];
  /** Wall ms from navigation start until every chart was drawn. */
  readonly openMs: number;
  readonly verdict: string;
  /** The page's scroll width in CSS px (wider than the viewport: something overflows sideways). */
  readonly scrollWidth: number;
  /** Header elements whose content is wider than their box (cut off or scrolled sideways): their tag.class. */
  readonly headerOverflow: readonly string[];
}

/**
 * Opens `file` (a report) in a new page of `browser` at `width`×900, waits until the page's
 * script has tried every `figure[data-chart]` (or `timeoutMs`), optionally screenshots the full page to
 * `screenshot`, and reports what it saw.
 */
export async function openReport(browser: Browser, file: string, opts: { readonly screenshot?: string; readonly width?: number; readonly timeoutMs?: number; readonly clip?: { x: number; y: number; width: number; height: number } } = {}): Promise<OpenedReport> {
  const page = await browser.newPage({ viewport: { width: opts.width ?? 1280, height: 900 } });
  const consoleErrors: string[] = [];
  const network: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
    network.push(url);
    return route.abort();
  });
  try {
    const t0 = Date.now();
    await page.goto(pathToFileURL(file).href);
    // The page's script marks the body once it tried every chart (drawn or not).
    await page.waitForSelector('body[data-charts-drawn]', { state: 'attached', timeout: opts.timeoutMs ?? 20_000 });
    const openMs = Date.now() - t0;
    const charts = await page.evaluate(() =>
      [...(globalThis as any).document.querySelectorAll('figure[data-chart]')].map((f: any) => {
        const marks: Record<string, number> = {};
        for (const g of f.querySelectorAll('svg g[aria-label]')) {
          const label = g.getAttribute('aria-label') ?? '';
          if (/axis|grid/.test(label)) continue;
          // A faceted mark has one unlabelled <g> per facet: count the shapes inside them.
          for (const c of g.children) marks[label] = (marks[label] ?? 0) + (c.tagName.toLowerCase() === 'g' && !c.hasAttribute('aria-label') ? c.childElementCount : 1);
        }
        return { id: f.getAttribute('data-chart') ?? '', rendered: f.getAttribute('data-rendered') === 'true', svgs: f.querySelectorAll('svg').length, marks };
      }),
    );
    const data = JSON.parse(await page.evaluate(() => ((globalThis as any).document.getElementById('podsim-report-data')?.textContent as string | undefined) ?? '{}')) as Record<string, unknown>;
    const verdict = await page.evaluate(() => ((globalThis as any).document.getElementById('verdict')?.textContent as string | undefined) ?? '');
    const scrollWidth = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
    const headerOverflow = await page.evaluate(() =>
      [...(globalThis as any).document.querySelectorAll('header *')].filter((e: any) => e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0).map((e: any) => `${e.tagName.toLowerCase()}.${e.className}`),
    );
    if (opts.screenshot) await page.screenshot({ path: opts.screenshot, ...(opts.clip ? { clip: opts.clip } : { fullPage: true }) });
    return { charts, data, consoleErrors, network, openMs, verdict, scrollWidth, headerOverflow };
  } finally {
    await page.close();
  }
}
