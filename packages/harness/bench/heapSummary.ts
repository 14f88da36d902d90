/**
 * Breaks a V8 heap snapshot down by owner (issue #19's memory breakdown): reads the
 * `.heapsnapshot` line by line (a 500 MB heap writes a file larger than one JS string may hold),
 * builds the dominator tree (Cooper, Harvey & Kennedy's iterative algorithm over the strong
 * edges, as Chrome DevTools' retained sizes), and prints: the self size by constructor, and the
 * retained size by owner: every object is charged to its nearest dominator that is an instance
 * of a named class (`MemoryStorage`, `TraceModel`, `PodWorkers`, …; plain Objects, Arrays, Maps
 * and closures are not owners), split by the owner's property that holds it.
 * Run: `node --max-old-space-size=8192 packages/harness/dist/bench/heapSummary.js FILE [top]`.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

/** Growable Int32 column. */
class Column {
  data = new Int32Array(1 << 20);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const d = new Int32Array(this.data.length * 2);
      d.set(this.data);
      this.data = d;
    }
    this.data[this.length++] = v;
  }
}

/** Bytes by key, with instance counts where counted. Sorted, largest first. */
export interface HeapSummary {
  readonly nodes: number;
  readonly reachable: number;
  /** Σ self size of the nodes reachable from the root over strong edges. */
  readonly reachableBytes: number;
  /** Self size charged to each owner class (`(no owner: …)` for what no named instance dominates), instances of it. */
  readonly byOwner: ReadonlyArray<readonly [string, number, number]>;
  /** `Owner.field`: the part of an owner's bytes held through that property (nested owners excluded). */
  readonly byField: ReadonlyArray<readonly [string, number]>;
  /** `type:constructor` self size and count. */
  readonly byConstructor: ReadonlyArray<readonly [string, number, number]>;
}

/** Reads a `.heapsnapshot` (as `v8.writeHeapSnapshot` writes it, one row per line) and breaks it down by owner. */
export async function summarizeHeapSnapshot(file: string): Promise<HeapSummary> {
  let meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } | undefined;
  const nodes = new Column();
  const edges = new Column();
  const strings: string[] = [];
  let section: 'head' | 'nodes' | 'edges' | 'strings' | 'other' = 'head';
  let head = '';
  const numbers = (line: string, into: Column) => {
    for (const part of line.split(',')) {
      const t = part.trim();
      if (t !== '' && t !== ']' && t !== '[') into.push(Number(t.replace(/[[\]]/g, '')));
    }
  };
  for await (const raw of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    const line = raw;
    if (section === 'head') {
      const i = line.indexOf('"nodes":[');
      if (i < 0) {
        head += line;
        continue;
      }
      head += line.slice(0, i);
      meta = JSON.parse(head.replace(/^\{"snapshot":/, '').replace(/,\s*$/, '')).meta;
      section = 'nodes';
      numbers(line.slice(i + 9), nodes);
      continue;
    }
    // V8 writes one node, edge or string per line; a section starts with its `"name":[` line.
    const section_ = /^\]?,?"(\w+)":\[/.exec(line);
    if (section_) {
      const name = section_[1];
      const rest = line.slice(section_[0].length);
      section = name === 'edges' ? 'edges' : name === 'strings' ? 'strings' : 'other';
      if (section === 'edges') numbers(rest, edges);
      else if (section === 'strings' && rest !== '') strings.push(JSON.parse(rest.replace(/,$/, '')));
      continue;
    }
    if (section === 'nodes') numbers(line, nodes);
    else if (section === 'edges') numbers(line, edges);
    else if (section === 'strings') {
      if (line === ']}' || line === ']') break;
      const end = line.endsWith(']}') ? line.length - 2 : line.endsWith(',') ? line.length - 1 : line.length;
      strings.push(JSON.parse(line.slice(line.startsWith(',') ? 1 : 0, end)));
    }
  }
  if (!meta) throw new Error(`${file}: no heap snapshot header`);
  const NF = meta.node_fields.length;
  const EF = meta.edge_fields.length;
  const nType = meta.node_fields.indexOf('type');
  const nName = meta.node_fields.indexOf('name');
  const nSelf = meta.node_fields.indexOf('self_size');
  const nEdges = meta.node_fields.indexOf('edge_count');
  const eType = meta.edge_fields.indexOf('type');
  const eName = meta.edge_fields.indexOf('name_or_index');
  const eTo = meta.edge_fields.indexOf('to_node');
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const weak = edgeTypes.indexOf('weak');
  const shortcut = edgeTypes.indexOf('shortcut');
  const N = nodes.length / NF;
  const nd = nodes.data;
  const ed = edges.data;
  const firstEdge = new Int32Array(N + 1);
  for (let i = 0, e = 0; i < N; i++) {
    firstEdge[i] = e;
    e += nd[i * NF + nEdges]! * EF;
    firstEdge[i + 1] = e;
  }
  const typeOf = (i: number) => nodeTypes[nd[i * NF + nType]!]!;
  const nameOf = (i: number) => strings[nd[i * NF + nName]!] ?? '?';
  const selfOf = (i: number) => nd[i * NF + nSelf]!;
  const strong = (e: number) => ed[e + eType] !== weak && ed[e + eType] !== shortcut;

  // Reverse post-order from the root (node 0) over strong edges, iteratively.
  const order = new Int32Array(N).fill(-1);
  const rpo = new Int32Array(N);
  let post = 0;
  {
    const stack = new Int32Array(N);
    const cursor = new Int32Array(N);
    const seen = new Uint8Array(N);
    let sp = 0;
    stack[sp++] = 0;
    seen[0] = 1;
    cursor[0] = firstEdge[0]!;
    while (sp > 0) {
      const v = stack[sp - 1]!;
      let pushed = false;
      while (cursor[v]! < firstEdge[v + 1]!) {
        const e = cursor[v]!;
        cursor[v] = e + EF;
        if (!strong(e)) continue;
        const w = ed[e + eTo]! / NF;
        if (seen[w]) continue;
        seen[w] = 1;
        cursor[w] = firstEdge[w]!;
        stack[sp++] = w;
        pushed = true;
        break;
      }
      if (!pushed) {
        sp--;
        order[v] = post;
        rpo[post++] = v;
      }
    }
  }
  // Predecessors (strong edges between reachable nodes), CSR.
  const predCount = new Int32Array(N + 1);
  for (let v = 0; v < N; v++) {
    if (order[v] < 0) continue;
    for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e += EF) if (strong(e) && order[ed[e + eTo]! / NF]! >= 0) predCount[ed[e + eTo]! / NF]!++;
  }
  const predStart = new Int32Array(N + 1);
  for (let v = 0; v < N; v++) predStart[v + 1] = predStart[v]! + predCount[v]!;
  const preds = new Int32Array(predStart[N]!);
  const fill = predStart.slice(0, N);
  for (let v = 0; v < N; v++) {
    if (order[v] < 0) continue;
    for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e += EF) {
      if (!strong(e)) continue;
      const w = ed[e + eTo]! / NF;
      if (order[w]! >= 0) preds[fill[w]!++] = v;
    }
  }
  // Iterative dominators on post-order numbers (root has the highest number).
  const idom = new Int32Array(N).fill(-1);
  idom[0] = 0;
  for (let changed = true; changed; ) {
    changed = false;
    for (let k = post - 2; k >= 0; k--) {
      const b = rpo[k]!;
      let nid = -1;
      for (let p = predStart[b]!; p < predStart[b + 1]!; p++) {
        let x = preds[p]!;
        if (idom[x] === -1) continue;
        if (nid === -1) {
          nid = x;
          continue;
        }
        let y = nid;
        while (x !== y) {
          while (order[x]! < order[y]!) x = idom[x]!;
          while (order[y]! < order[x]!) y = idom[y]!;
        }
        nid = x;
      }
      if (nid !== -1 && idom[b] !== nid) {
        idom[b] = nid;
        changed = true;
      }
    }
  }
  // Retained sizes: children before parents = increasing post-order.
  const retained = new Float64Array(N);
  for (let k = 0; k < post; k++) {
    const v = rpo[k]!;
    retained[v] += selfOf(v);
    if (v !== 0) retained[idom[v]!] += retained[v]!;
  }
  const GENERIC = new Set(['Object', 'Array', 'Map', 'Set', 'WeakMap', 'Function', 'Promise', 'Error', 'ArrayBuffer', 'Uint8Array', 'Int32Array', 'Float64Array', 'Buffer', 'FastBuffer', 'Date', 'RegExp', 'Module', 'global', 'Window']);
  const isOwner = (v: number) => typeOf(v) === 'object' && /^[A-Z]/.test(nameOf(v)) && !GENERIC.has(nameOf(v));
  // Owner of each node: nearest dominator (itself included) that is an owner; parents come first in RPO.
  const owner = new Int32Array(N).fill(-1);
  for (let k = post - 1; k >= 0; k--) {
    const v = rpo[k]!;
    owner[v] = isOwner(v) ? v : v === 0 ? -1 : owner[idom[v]!]!;
  }
  const edgeName = (from: number, to: number): string => {
    for (let e = firstEdge[from]!; e < firstEdge[from + 1]!; e += EF) {
      if (ed[e + eTo]! / NF !== to) continue;
      const t = edgeTypes[ed[e + eType]!];
      return t === 'element' || t === 'hidden' ? `[${t}]` : (strings[ed[e + eName]!] ?? '?');
    }
    // Dominated without a direct edge (reached through several paths below the owner).
    return `(${typeOf(to)} ${nameOf(to).slice(0, 40)})`;
  };
  // For each node, the child of its owner in the dominator tree that it hangs under (parents first).
  const ownerChild = new Int32Array(N).fill(-1);
  for (let k = post - 1; k >= 0; k--) {
    const v = rpo[k]!;
    if (v === 0 || isOwner(v)) continue;
    const d = idom[v]!;
    ownerChild[v] = isOwner(d) ? v : ownerChild[d]!;
  }
  const byOwner = new Map<string, { bytes: number; count: number }>();
  const byField = new Map<string, number>();
  const byCtor = new Map<string, { bytes: number; count: number }>();
  const fieldNames = new Map<number, string>();
  let total = 0;
  for (let k = 0; k < post; k++) {
    const v = rpo[k]!;
    const s = selfOf(v);
    total += s;
    const ctor = `${typeOf(v)}:${typeOf(v) === 'object' || typeOf(v) === 'closure' ? nameOf(v) : ''}`;
    const c = byCtor.get(ctor) ?? { bytes: 0, count: 0 };
    c.bytes += s;
    c.count++;
    byCtor.set(ctor, c);
    const o = owner[v]!;
    const oname = o < 0 ? '(no owner: roots, modules, shared)' : nameOf(o);
    const b = byOwner.get(oname) ?? { bytes: 0, count: 0 };
    b.bytes += s;
    if (o === v) b.count++;
    byOwner.set(oname, b);
    // Self size charged to the owner's field that holds it (nested owners are charged on their own).
    const x = ownerChild[v]!;
    if (o >= 0 && x >= 0) {
      let f = fieldNames.get(x);
      if (f === undefined) fieldNames.set(x, (f = edgeName(idom[x]!, x)));
      const key = `${oname}.${f}`;
      byField.set(key, (byField.get(key) ?? 0) + s);
    }
  }
  return {
    nodes: N,
    reachable: post,
    reachableBytes: total,
    byOwner: [...byOwner].map(([k, v]): [string, number, number] => [k, v.bytes, v.count]).sort((a, b) => b[1] - a[1]),
    byField: [...byField].map(([k, v]): [string, number] => [k, v]).sort((a, b) => b[1] - a[1]),
    byConstructor: [...byCtor].map(([k, v]): [string, number, number] => [k, v.bytes, v.count]).sort((a, b) => b[1] - a[1]),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  const top = Number(process.argv[3] ?? 40);
  if (!file) {
    process.stderr.write('usage: heapSummary.js FILE.heapsnapshot [top]\n');
    process.exit(2);
  }
  const h = await summarizeHeapSnapshot(file);
  const MB = (b: number) => (b / 2 ** 20).toFixed(1);
  const print = (title: string, rows: ReadonlyArray<readonly [string, number, number?]>) => {
    process.stdout.write(`\n${title}\n`);
    for (const [k, b, n] of rows.slice(0, top)) process.stdout.write(`${MB(b).padStart(9)} MB  ${(n === undefined ? '' : String(n)).padStart(9)}  ${k}\n`);
  };
  process.stdout.write(`${file}: ${h.nodes} nodes, ${h.reachable} reachable, ${MB(h.reachableBytes)} MB reachable self size\n`);
  print('retained by owner (MB, instances)', h.byOwner);
  print('retained by owner field, nested owners excluded (MB)', h.byField);
  print('self size by type:constructor (MB, count)', h.byConstructor);
}
