/**
 * Where a value came from: YAML documents parsed with the `yaml` library (which keeps every
 * node's source range) and a locator that turns a path inside a document into file, line and
 * column, so every complaint about a scenario names the place to fix (STYLE.md "Errors" 4).
 */
import { LineCounter, isMap, isNode, isPair, isScalar, isSeq, parseAllDocuments, type Document, type Node } from 'yaml';
import { jsonShapeProblem } from '../jsonShape.js';

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
 * A file's bytes as text: UTF-8 (a BOM is dropped), else an issue naming the line of the first
 * byte that is not (go-yaml, and so kubectl, refuses such files too: "invalid leading UTF-8
 * octet"); a NUL byte means a binary file.
 */
export function decodeUtf8(file: string, bytes: Uint8Array): string | ScenarioIssue {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    // Find the first invalid sequence: decode prefixes leniently and look for U+FFFD.
    const lenient = new TextDecoder('utf-8').decode(bytes);
    const at = lenient.indexOf('\uFFFD');
    const line = lenient.slice(0, Math.max(0, at)).split('\n').length;
    return { file, line, column: 1, field: '', message: 'not a UTF-8 text file (YAML must be UTF-8): re-save it as UTF-8' };
  }
  const nul = text.indexOf('\0');
  if (nul >= 0) return { file, line: text.slice(0, nul).split('\n').length, column: 1, field: '', message: 'the file contains a NUL byte: this is a binary file, not a YAML scenario' };
  return text;
}

/**
 * Parses a YAML stream into documents, returning syntax errors as issues (with line and
 * column). Empty documents (a trailing `---`) are dropped. Merge keys (`<<: *defaults`) are
 * resolved, as Kubernetes' YAML decoder (go-yaml v2) resolves them. A document whose value
 * cannot be a Kubernetes object — an alias inside its own anchor, an alias bomb, nesting
 * deeper than MAX_OBJECT_DEPTH (jsonShape.ts) — is an issue at the offending node.
 */
export function parseYamlStream(file: string, text: string): { docs: SourceDoc[]; issues: ScenarioIssue[] } {
  const lines = new LineCounter();
  const parsed = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, merge: true });
  const docs: SourceDoc[] = [];
  const issues: ScenarioIssue[] = [];
  for (const doc of parsed) {
    for (const e of doc.errors) {
      const pos = e.linePos?.[0] ?? lines.linePos(e.pos[0]);
      // One mistake often trips several parser rules on the same line; the first says it best.
      if (issues.some((i) => i.line === pos.line)) continue;
      // The yaml parser recurses per nesting level; a document nested thousands deep overflows it.
      const what = /call stack/i.test(e.message) ? 'nested too deeply for a Kubernetes object' : e.message.split('\n')[0];
      issues.push({ file, line: pos.line, column: pos.col, field: '', message: `YAML syntax error: ${what}` });
    }
    if (doc.errors.length > 0 || doc.contents === null) continue;
    const src = new SourceDoc(file, doc, lines);
    let value: unknown;
    try {
      value = src.toJS();
    } catch (e) {
      // The yaml library refuses alias bombs ("Excessive alias count …") while converting.
      const pos = lines.linePos(doc.contents.range?.[0] ?? 0);
      issues.push({ file, line: pos.line, column: pos.col, field: '', message: `YAML: ${e instanceof Error ? e.message : String(e)} (too many aliases)` });
      continue;
    }
    const bad = jsonShapeProblem(value);
    if (bad) {
      issues.push(src.issue(bad.segments, `YAML: ${bad.message}`));
      continue;
    }
    docs.push(src);
  }
  return { docs, issues };
}
