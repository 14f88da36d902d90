/**
 * The memory breakdown of issue #19 (`bench/heapSummary.ts`): bytes are charged to the nearest
 * dominating instance of a named class, so an object two owners share is nobody's, and a weak
 * reference does not make an object shared. Also a real snapshot of a host thread
 * (`Simulation.writeHeapSnapshots`, the call `bench/heapAtPeak.ts` makes mid-storm) parses, with
 * the actors' classes among its owners.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { summarizeHeapSnapshot } from '../bench/heapSummary.js';
import { runBenchPlan } from '../src/bench/runBench.js';
import { stormPlan } from '../src/bench/stormPlan.js';

/** A heap snapshot in V8's line layout: nodes [type, name, id, self_size, edge_count, trace_node_id, detachedness], edges [type, name_or_index, to_node]. */
function snapshotText(): string {
  const strings = ['<dummy>', '(root)', 'MemoryStorage', 'TraceModel', 'Object', 'storage', 'model', 'ring', 'spans', 'shared', 'peek'];
  const s = (x: string) => strings.indexOf(x);
  // types: 1 array, 3 object, 9 synthetic. Edge types: 1 element, 2 property, 6 weak.
  const nodes = [
    [9, s('(root)'), 1, 0, 2],
    [3, s('MemoryStorage'), 3, 100, 2],
    [3, s('TraceModel'), 5, 50, 2],
    [1, s('<dummy>'), 7, 1000, 1],
    [3, s('Object'), 9, 300, 0],
    [3, s('Object'), 11, 70, 0],
    [3, s('Object'), 13, 200, 1],
  ];
  const to = (i: number) => i * 7;
  const edges = [
    [2, s('storage'), to(1)],
    [2, s('model'), to(2)],
    [2, s('ring'), to(3)],
    [2, s('shared'), to(5)],
    [2, s('spans'), to(4)],
    [2, s('shared'), to(5)],
    [1, 0, to(6)],
    [6, s('peek'), to(4)],
  ];
  const meta = {
    node_fields: ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id', 'detachedness'],
    node_types: [['hidden', 'array', 'string', 'object', 'code', 'closure', 'regexp', 'number', 'native', 'synthetic'], 'string', 'number', 'number', 'number', 'number', 'number'],
    edge_fields: ['type', 'name_or_index', 'to_node'],
    edge_types: [['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak'], 'string_or_number', 'node'],
  };
  const rows = (name: string, xs: number[][], last = false) => `"${name}":[${xs.map((r) => r.join(',')).join('\n,')}\n]${last ? '' : ','}\n`;
  return (
    `{"snapshot":{"meta":${JSON.stringify(meta)},"node_count":${nodes.length},"edge_count":${edges.length},"trace_function_count":0},\n` +
    rows('nodes', nodes.map((n) => [...n, 0, 0])) +
    rows('edges', edges) +
    '"trace_function_infos":[],\n"trace_tree":[],\n"samples":[],\n"locations":[],\n' +
    `"strings":[${strings.map((x) => JSON.stringify(x)).join(',\n')}]}`
  );
}

test('bytes go to the nearest dominating named instance: an object two owners share is neither’s, a weak edge shares nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'podsim-heap-'));
  try {
    const file = join(dir, 'tiny.heapsnapshot');
    writeFileSync(file, snapshotText());
    const h = await summarizeHeapSnapshot(file);
    t.is(h.nodes, 7);
    t.is(h.reachableBytes, 1720);
    const owner = Object.fromEntries(h.byOwner.map(([k, b, n]) => [k, [b, n]]));
    // MemoryStorage itself, its ring array and the object in the ring; TraceModel and its spans
    // (the ring object's weak edge to the spans does not take them from TraceModel).
    t.deepEqual(owner.MemoryStorage, [1300, 1]);
    t.deepEqual(owner.TraceModel, [350, 1]);
    t.deepEqual(owner['(no owner: roots, modules, shared)'], [70, 0]);
    t.deepEqual(Object.fromEntries(h.byField), { 'MemoryStorage.ring': 1200, 'TraceModel.spans': 300 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a host thread snapshot taken mid-storm (Simulation.writeHeapSnapshots) parses and names the actors’ classes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'podsim-heap-'));
  try {
    let written: string[] = [];
    const plan = stormPlan({ nodes: 2, podsPerNode: 2, containers: 1, seed: 1, placement: 'single' });
    const f = await runBenchPlan(plan, {
      skipRaw: true,
      async onSegment({ sim, nowUs, deleteAtUs }) {
        if (deleteAtUs !== undefined && written.length === 0 && nowUs > deleteAtUs) written = await sim.writeHeapSnapshots(join(dir, 'storm'));
      },
    });
    t.true(f.ok);
    t.deepEqual(written, [join(dir, 'storm-host0.heapsnapshot')]);
    const h = await summarizeHeapSnapshot(written[0]!);
    const owners = new Set(h.byOwner.map(([k]) => k));
    for (const c of ['HostCore', 'MemoryStorage', 'PodWorkers', 'StatusManager']) t.true(owners.has(c), c);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
