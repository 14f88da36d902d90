/**
 * kubectl's column alignment: k8s.io/cli-runtime `pkg/printers/tabwriter.go` `GetNewTabWriter`
 * (minwidth 6, padding 3, pad ' ', flag RememberWidths) over github.com/liggitt/tabwriter, a
 * text/tabwriter fork that remembers each column's widest cell across flushes. `kubectl get -w`
 * (kubectl v0.22.8 `pkg/cmd/get/get.go` `watch`) flushes once for the initial list and once per
 * event, so later rows align with earlier ones and columns only ever widen. The last cell of a
 * row is not padded.
 */

const MIN_WIDTH = 6;
const PADDING = 3;

export class KubectlTabWriter {
  private readonly widths: number[] = [];

  /** Formats one flush: every line is a list of cells; returns the printed lines. */
  flush(lines: ReadonlyArray<readonly string[]>): string[] {
    const cols = Math.max(0, ...lines.map((l) => l.length - 1));
    for (let c = 0; c < cols; c++) {
      let w = MIN_WIDTH;
      for (const l of lines) if (c < l.length - 1) w = Math.max(w, [...l[c]].length + PADDING);
      this.widths[c] = Math.max(this.widths[c] ?? 0, w);
    }
    return lines.map((l) => l.map((cell, i) => (i < l.length - 1 ? cell + ' '.repeat(Math.max(0, this.widths[i] - [...cell].length)) : cell)).join(''));
  }
}
