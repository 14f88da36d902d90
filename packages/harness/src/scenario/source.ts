/**
 * Where a value came from: YAML documents parsed with the `yaml` library (which keeps every
 * node's source range) and a locator that turns a path inside a document into file, line and
 * column, so every complaint about a scenario names the place to fix (STYLE.md "Errors" 4).
 */
import { LineCounter, isMap, isNode, isPair, isScalar, isSeq, parseAllDocuments, type Document, type Node } from 'yaml';

export type Path = ReadonlyArray<string | number>;

/** One problem in user input: where and what. */
export interface ScenarioIssue {
  readonly file: string;
  /** 1-based; 0 when the problem is about the file as a whole. */
  readonly line: number;
  readonly column: number;
  /** Dotted field path, e.g. `steps[3].delete.gracePeriod` or `Deployment/minio spec.replicas`. */
  readonly field: string;
  readonly message: string;
  /** Warnings do not stop the run. */
  readonly warning?: boolean;
}

/** Bad user input: carries every issue found; the CLI prints them and exits 2. */
export class ScenarioError extends Error {
  constructor(readonly issues: readonly ScenarioIssue[]) {
    super(issues.map(formatIssue).join('\n'));
    this.name = 'ScenarioError';
  }
}

/** `file:line:col: field: message` (the form editors and terminals make clickable). */
export function formatIssue(i: ScenarioIssue): string {
  const where = i.line > 0 ? `${i.file}:${i.line}:${i.column}` : i.file;
  return `${where}: ${i.warning ? 'warning: ' : ''}${i.field ? `${i.field}: ` : ''}${i.message}`;
}

/** Formats a path as `a.b[3].c` (keys with dots or slashes are quoted: `annotations["podsim.dev/x"]`). */
export function formatPath(path: Path): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(p)) out += out ? `.${p}` : p;
    else out += `[${JSON.stringify(p)}]`;
  }
  return out;
}

/** One parsed YAML document of one file. */
export class SourceDoc {
  constructor(
    readonly file: string,
    readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  /** The plain JavaScript value of the document. */
  toJS(): unknown {
    return this.doc.toJS({ maxAliasCount: 1000 });
  }

  /**
   * Line and column of the node at `path`; for a missing node, of its nearest existing ancestor.
   * With `key`, of the map key itself (for "unknown field" complaints).
   */
  locate(path: Path, key?: string): { line: number; column: number } {
    let node: unknown = this.doc.contents;
    let best: Node | null = isNode(node) ? node : null;
    for (const seg of key === undefined ? path : [...path, key]) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) break;
        if (key !== undefined && seg === key && isNode(pair.key)) {
          best = pair.key;
          break;
        }
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number') {
        node = node.items[seg];
      } else break;
      if (isNode(node)) best = node;
      else break;
    }
    const offset = best?.range?.[0] ?? 0;
    const pos = this.lines.linePos(offset);
    return { line: pos.line, column: pos.col };
  }

  issue(path: Path, message: string, opts: { key?: string; prefix?: string; warning?: boolean } = {}): ScenarioIssue {
    const { line, column } = this.locate(path, opts.key);
    const field = [opts.prefix, formatPath(opts.key === undefined ? path : [...path, opts.key])].filter(Boolean).join(' ');
    return { file: this.file, line, column, field, message, ...(opts.warning ? { warning: true } : {}) };
  }
}

/**
 * Parses a YAML stream into documents, returning syntax errors as issues (with line and
 * column). Empty documents (a trailing `---`) are dropped.
 */
export function parseYamlStream(file: string, text: string): { docs: SourceDoc[]; issues: ScenarioIssue[] } {
  const lines = new LineCounter();
  const parsed = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const docs: SourceDoc[] = [];
  const issues: ScenarioIssue[] = [];
  for (const doc of parsed) {
    for (const e of doc.errors) {
      const pos = e.linePos?.[0] ?? lines.linePos(e.pos[0]);
      // One mistake often trips several parser rules on the same line; the first says it best.
      if (issues.some((i) => i.line === pos.line)) continue;
      issues.push({ file, line: pos.line, column: pos.col, field: '', message: `YAML syntax error: ${e.message.split('\n')[0]}` });
    }
    if (doc.errors.length === 0 && doc.contents !== null) docs.push(new SourceDoc(file, doc, lines));
  }
  return { docs, issues };
}
