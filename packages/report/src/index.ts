/**
 * @podsim/report: the HTML `--report` of `podsim run`, `bench` and `explore` (issue #21). The
 * harness fills a {@link ReportInput} (plain data, input.ts) from its results; this package
 * reduces it to the data of each chart (charts.ts) and writes one self-contained page (html.ts)
 * drawn with Observable Plot.
 */
export * from './input.js';
export * from './charts.js';
export { renderReportHtml, writeReport, MAX_WATCH_LINES } from './html.js';
export { renderCharts } from './client.js';
