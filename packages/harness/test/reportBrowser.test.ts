/**
 * The HTML report in a real browser (issue #21): Debian's Chromium (installed by .ci/run when
 * missing) opens the report of examples/minio-recreate.yaml and of a small bench storm. Every
 * chart must be drawn, as SVG with the marks its data calls for (one area per pod state, one
 * rect per latency bin, one bar per kill-path span and one tick per instant, one line per
 * rate-limited client), with no console error and no request off the file system; a screenshot
 * is produced. Without Chromium the test fails (it does not skip): the report would be unchecked.
 */
import test from 'ava';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { main } from '../src/cli.js';
import { launchChromium, openReport, type OpenedReport } from './support/browser.js';

const EXAMPLES = fileURLToPath(new URL('../../../../examples/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'podsim-browser-'));
let browser: Browser | undefined;

test.before(async () => {
  browser = await launchChromium();
});
test.after.always(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

type Data = Record<string, { states?: string[]; bins?: unknown[]; spans?: unknown[]; marks?: unknown[]; series?: unknown[]; nodes?: unknown[]; cdf?: unknown[]; bars?: unknown[]; windows?: unknown[]; removals?: unknown[]; closes?: unknown[] }>;

/** Every chart drawn with the marks its data calls for. */
function assertCharts(t: import('ava').ExecutionContext, r: OpenedReport, expected: readonly string[]): void {
  t.deepEqual(r.consoleErrors, [], 'no console errors');
  t.deepEqual(r.network, [], 'no request off the file system');
  t.deepEqual(
    r.charts.map((c) => c.id),
    expected,
  );
  const data = r.data as Data;
  for (const c of r.charts) {
    t.true(c.rendered && c.svgs >= 1, `${c.id} drawn as SVG`);
    const m = c.marks;
    switch (c.id) {
      case 'pods-over-time':
        t.is(m.area, data[c.id].states!.length, 'one area per pod state');
        break;
      case 'latency-histogram':
        t.is(m.rect, data[c.id].bins!.length, 'one rect per bin');
        t.is(m.text, 4, 'p50, p90, p99 and max labelled');
        break;
      case 'latency-cdf':
        t.is(m.line, 1);
        break;
      case 'kill-path':
        t.is(m.bar, data[c.id].spans!.length, 'one bar per span');
        t.is(m.tick, data[c.id].marks!.length, 'one tick per instant');
        t.true(m.tick > 0);
        break;
      case 'rate-limits-kubelet':
      case 'rate-limits-control-plane':
        t.is(m.line, data[c.id].series!.length, 'one line per client');
        break;
      case 'node-drain':
        t.is(m.bar, data[c.id].nodes!.length, 'one bar per node');
        break;
      case 'node-drain-histogram':
        t.true(m.rect > 0);
        break;
      case 'traffic-over-time':
        t.is(m.rect, data[c.id].bars!.length, 'one rect per (source, bucket, outcome) with requests');
        t.true(m.rect > 0);
        break;
      case 'traffic-failures-by-pod':
      case 'traffic-failures-by-node':
        t.is(m.bar, data[c.id].bars!.length, 'one bar per (row, source)');
        t.true(m.bar > 0);
        break;
      case 'traffic-exposure':
        t.is(m.bar, data[c.id].windows!.length, 'one bar per exposure window');
        t.is(m.tick, data[c.id].removals!.length, "one tick per node's rule removal");
        t.is(m.dot, data[c.id].closes!.length, 'one dot per listener close');
        t.true(m.bar > 0 && m.tick > 0 && m.dot > 0);
        break;
      default:
        t.fail(`unexpected chart ${c.id}`);
    }
  }
}

test('the minio report and a small storm report render every chart in Chromium, no console error, a screenshot', async (t) => {
  const t0 = Date.now();
  const minio = join(dir, 'minio.html');
  const run = await cli(['run', join(EXAMPLES, 'minio-recreate.yaml'), '--quiet', '--engine', 'local', '--report', minio]);
  t.is(run.code, 0, run.out + run.err);
  const shot = join(dir, 'minio.png');
  const m = await openReport(browser!, minio, { screenshot: shot });
  t.is(m.verdict, 'PASS');
  assertCharts(t, m, ['pods-over-time', 'latency-histogram', 'latency-cdf', 'kill-path']);
  t.true(statSync(shot).size > 20_000, 'a screenshot with content');

  const storm = join(dir, 'storm.html');
  const b = await cli(['bench', 'storm', '--nodes', '4', '--pods-per-node', '10', '--raw-messages', '1000', '--report', storm]);
  t.is(b.code, 0, b.out + b.err);
  const s = await openReport(browser!, storm, { screenshot: join(dir, 'storm.png') });
  t.is(s.verdict, 'PASS');
  assertCharts(t, s, ['pods-over-time', 'latency-histogram', 'latency-cdf', 'node-drain', 'node-drain-histogram', 'kill-path', 'rate-limits-kubelet']);
  // The bench header's long figure lines were cut off at the right of their box (scrolled sideways).
  t.true(m.scrollWidth <= 1280, `the minio page fits 1280 px (scroll width ${m.scrollWidth})`);
  t.true(s.scrollWidth <= 1280, `the storm page fits 1280 px (scroll width ${s.scrollWidth})`);
  t.deepEqual(s.headerOverflow, [], 'no header line is cut off (the bench figures wrap)');
  t.deepEqual(m.headerOverflow, []);
  t.log(`minio opened in ${m.openMs} ms, storm in ${s.openMs} ms; ${(Date.now() - t0) / 1000}s in all`);
});

test('a traffic report (examples/rolling-update-traffic.yaml) draws its traffic charts in Chromium: requests over time, failures by pod and node, the exposure Gantt; no console error, no request off the file system', async (t) => {
  t.timeout(180_000);
  const file = join(dir, 'traffic.html');
  const run = await cli(['run', join(EXAMPLES, 'rolling-update-traffic.yaml'), '--quiet', '--engine', 'local', '--report', file]);
  t.is(run.code, 0, run.out + run.err);
  const r = await openReport(browser!, file, { screenshot: join(dir, 'traffic.png') });
  t.is(r.verdict, 'PASS');
  assertCharts(t, r, ['pods-over-time', 'latency-histogram', 'latency-cdf', 'kill-path', 'traffic-over-time', 'traffic-failures-by-pod', 'traffic-failures-by-node', 'traffic-exposure', 'rate-limits-kubelet', 'rate-limits-control-plane']);
  // Two sources, two facets; the over-time chart's marks stay bounded (24k requests, not 24k rects).
  const over = r.charts.find((c) => c.id === 'traffic-over-time')!;
  t.true(over.marks.rect <= 2 * 4 * 300, `${over.marks.rect} rects`);
  t.true(r.scrollWidth <= 1280, `the traffic page fits 1280 px (scroll width ${r.scrollWidth})`);
});
