/**
 * Regenerates the README's report screenshot (docs/report-screenshot.png): `pnpm
 * report:screenshot` runs examples/cases/C02-prestop-time-added-to-grace.yaml with `--report`
 * and takes a full-page screenshot of it in Debian's Chromium (support/browser.ts). C02 shows
 * the kill path that makes "preStop time is added to the grace" obvious: the hook, then
 * SIGTERM, then SIGKILL 30 s later.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli.js';
import { launchChromium, openReport } from './browser.js';

const root = fileURLToPath(new URL('../../../../../', import.meta.url));
const out = join(root, 'docs', 'report-screenshot.png');
const dir = mkdtempSync(join(tmpdir(), 'podsim-screenshot-'));
try {
  const report = join(dir, 'c02.html');
  const lines: string[] = [];
  const code = await main(['run', 'examples/cases/C02-prestop-time-added-to-grace.yaml', '--quiet', '--engine', 'local', '--report', report], { out: (l) => lines.push(l), err: (l) => lines.push(l) });
  if (code !== 0) throw new Error(`podsim run exited ${code}:\n${lines.join('\n')}`);
  const browser = await launchChromium();
  try {
    const r = await openReport(browser, report, { screenshot: out, width: 1100 });
    if (r.consoleErrors.length > 0) throw new Error(`console errors: ${r.consoleErrors.join('; ')}`);
    process.stdout.write(`${out} written (${r.charts.length} charts, opened in ${r.openMs} ms)\n`);
  } finally {
    await browser.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
