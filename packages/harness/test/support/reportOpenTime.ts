/**
 * How long a report takes to open (docs/benchmarks.md, "HTML report"): opens each HTML file given
 * on the command line 3 times in Debian's Chromium and prints ONE JSON line per file: its size and
 * the median wall ms from navigation until every chart was drawn (support/browser.ts).
 *   node packages/harness/dist/test/support/reportOpenTime.js report.html [more.html …]
 */
import { statSync } from 'node:fs';
import { launchChromium, openReport } from './browser.js';

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write('usage: reportOpenTime.js REPORT.html [...]\n');
  process.exit(2);
}
const browser = await launchChromium();
try {
  for (const file of files) {
    const runs: number[] = [];
    let charts = 0;
    let errors: readonly string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await openReport(browser, file, { timeoutMs: 60_000 });
      runs.push(r.openMs);
      charts = r.charts.filter((c) => c.rendered).length;
      errors = r.consoleErrors;
    }
    runs.sort((a, b) => a - b);
    process.stdout.write(`${JSON.stringify({ name: 'report-open', file, bytes: statSync(file).size, charts, openMsMedian: runs[1], openMs: runs, consoleErrors: errors.length })}\n`);
  }
} finally {
  await browser.close();
}
