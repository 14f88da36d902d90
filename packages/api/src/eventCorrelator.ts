/**
 * client-go's EventCorrelator (tools/record/events_cache.go, v0.22.8) as a pure machine shared by
 * the kubelet's and the controllers' event recorders: `EventAggregate` (events that differ only in
 * message, more than 10 within 10 minutes, become one "(combined from similar events): …" Event),
 * `eventObserve` (an event seen before becomes a patch of the first one: `count` + 1, a new
 * `lastTimestamp` and message, the first name and `firstTimestamp`), and the
 * `EventSourceObjectSpamFilter` (a token bucket per source + involved object: burst 25, one more
 * per 5 minutes; a filtered event is dropped). Each cache is an LRU of 4096 entries, as upstream.
 * Times are virtual µs since the run's epoch. Deliberate difference: when the aggregator's set of
 * messages is full, upstream drops an arbitrary one (`PopAny`); podsim drops the oldest, so runs
 * stay deterministic.
 */
import type { Event } from './k8s/core.js';

/** The `(count, lastTimestamp, message)` strategic-merge patch `eventObserve` computes for a repeat. */
export interface EventPatch {
  readonly count: number;
  readonly lastTimestamp: string;
  readonly message: string;
}

/** `EventCorrelateResult`: drop it (`skip`), create `event`, or patch it with `patch`. */
export type EventCorrelateResult = { readonly skip: true } | { readonly skip: false; readonly event: Event; readonly patch?: EventPatch };

export interface EventCorrelatorOptions {
  /** `maxEvents` of the aggregator (default 10). */
  readonly maxEvents?: number;
  /** `maxIntervalInSeconds` of the aggregator (default 600). */
  readonly maxIntervalSeconds?: number;
  /** Spam filter burst (default 25). */
  readonly spamBurst?: number;
  /** Spam filter refill, tokens per second (default 1/300). */
  readonly spamQps?: number;
  /** Entries of each LRU cache (default 4096, `maxLruCacheEntries`). */
  readonly lruSize?: number;
}

/** `lru.Cache` of `golang/groupcache`: a Map in recency order. */
class Lru<V> {
  private readonly m = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(k: string): V | undefined {
    const v = this.m.get(k);
    if (v !== undefined) {
      this.m.delete(k);
      this.m.set(k, v);
    }
    return v;
  }
  add(k: string, v: V): void {
    this.m.delete(k);
    this.m.set(k, v);
    if (this.m.size > this.max) this.m.delete(this.m.keys().next().value as string);
  }
}

interface AggregateRecord {
  /** Messages seen for the aggregate key, oldest first. */
  readonly localKeys: Set<string>;
  lastUs: number;
}

interface EventLog {
  readonly count: number;
  readonly firstTimestamp: string;
  readonly name: string;
}

interface SpamRecord {
  tokens: number;
  lastUs: number;
}

const US = 1_000_000;

function source(e: Event): string {
  return `${e.source?.component ?? ''}${e.source?.host ?? ''}`;
}

function objectKey(e: Event, withFieldPath: boolean): string {
  const o = e.involvedObject;
  return `${o.kind ?? ''}${o.namespace ?? ''}${o.name ?? ''}${withFieldPath ? (o.fieldPath ?? '') : ''}${o.uid ?? ''}${o.apiVersion ?? ''}`;
}

/** `getEventKey`: every identifying field, the message included. */
export function getEventKey(e: Event): string {
  return `${source(e)}${objectKey(e, true)}${e.type ?? ''}${e.reason ?? ''}${e.message ?? ''}`;
}

/** `EventAggregatorByReasonFunc`: (aggregate key without the message, the message). */
function aggregateKeys(e: Event): [string, string] {
  return [`${source(e)}${objectKey(e, false)}${e.type ?? ''}${e.reason ?? ''}${e.reportingComponent ?? ''}${e.reportingInstance ?? ''}`, e.message ?? ''];
}

/** `getSpamKey`: source and involved object. */
function spamKey(e: Event): string {
  return `${source(e)}${objectKey(e, false)}`;
}

export class EventCorrelator {
  private readonly maxEvents: number;
  private readonly maxIntervalUs: number;
  private readonly spamBurst: number;
  private readonly spamQps: number;
  private readonly aggregates: Lru<AggregateRecord>;
  private readonly logs: Lru<EventLog>;
  private readonly spam: Lru<SpamRecord>;

  constructor(opts: EventCorrelatorOptions = {}) {
    this.maxEvents = opts.maxEvents ?? 10;
    this.maxIntervalUs = (opts.maxIntervalSeconds ?? 600) * US;
    this.spamBurst = opts.spamBurst ?? 25;
    this.spamQps = opts.spamQps ?? 1 / 300;
    const n = opts.lruSize ?? 4096;
    this.aggregates = new Lru(n);
    this.logs = new Lru(n);
    this.spam = new Lru(n);
  }

  /**
   * `EventCorrelate(newEvent)` at virtual µs `nowUs`; `timestamp` is `nowUs` as RFC 3339 and
   * `name` the name `makeEvent` would give an Event created now (`<object>.<hex unix ns>`). The
   * input is not modified.
   */
  correlate(newEvent: Event, nowUs: number, timestamp: string, name: string): EventCorrelateResult {
    const [aggregated, key] = this.aggregate(newEvent, nowUs, timestamp, name);
    const observed = this.observe(aggregated, key);
    if (this.filtered(observed.event, nowUs)) return { skip: true };
    return { skip: false, ...observed };
  }

  /** `EventAggregator.EventAggregate`. */
  private aggregate(e: Event, nowUs: number, timestamp: string, name: string): [Event, string] {
    const [aggKey, localKey] = aggregateKeys(e);
    let record = this.aggregates.get(aggKey);
    if (record === undefined || nowUs - record.lastUs > this.maxIntervalUs) record = { localKeys: new Set(), lastUs: nowUs };
    record.localKeys.delete(localKey);
    record.localKeys.add(localKey);
    record.lastUs = nowUs;
    this.aggregates.add(aggKey, record);
    if (record.localKeys.size < this.maxEvents) return [e, getEventKey(e)];
    // Keep the set one below the limit, so every further similar event is aggregated too.
    record.localKeys.delete(record.localKeys.values().next().value as string);
    const combined: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: e.metadata.namespace },
      involvedObject: e.involvedObject,
      reason: e.reason,
      message: `(combined from similar events): ${e.message ?? ''}`,
      source: e.source,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
      type: e.type,
    };
    return [combined, aggKey];
  }

  /** `eventLogger.eventObserve`: a repeat takes the first one's name and firstTimestamp, count + 1. */
  private observe(e: Event, key: string): { event: Event; patch?: EventPatch } {
    const last = this.logs.get(key);
    let event = e;
    let patch: EventPatch | undefined;
    if (last !== undefined && last.count > 0) {
      event = { ...e, metadata: { ...e.metadata, name: last.name }, firstTimestamp: last.firstTimestamp, count: last.count + 1 };
      patch = { count: last.count + 1, lastTimestamp: event.lastTimestamp ?? '', message: event.message ?? '' };
    }
    this.logs.add(key, { count: event.count ?? 1, firstTimestamp: event.firstTimestamp ?? '', name: event.metadata.name ?? '' });
    return patch ? { event, patch } : { event };
  }

  /** `EventSourceObjectSpamFilter.Filter`: true = drop (the object's token bucket is empty). */
  private filtered(e: Event, nowUs: number): boolean {
    const k = spamKey(e);
    let r = this.spam.get(k);
    if (r === undefined) r = { tokens: this.spamBurst, lastUs: nowUs };
    r.tokens = Math.min(this.spamBurst, r.tokens + ((nowUs - r.lastUs) / US) * this.spamQps);
    r.lastUs = nowUs;
    this.spam.add(k, r);
    if (r.tokens < 1) return true;
    r.tokens -= 1;
    return false;
  }
}

/**
 * `makeEvent`'s name: `<involvedObject name>.<creation time as hex Unix nanoseconds>`
 * (`fmt.Sprintf("%v.%x", ref.Name, t.UnixNano())`). `lastNs` keeps names from one recorder unique
 * within a virtual µs (client-go's would collide); pass the previous result's `ns` back in.
 */
export function eventName(objectName: string, epochUnixSeconds: number, nowUs: number, lastNs: bigint): { name: string; ns: bigint } {
  let ns = (BigInt(epochUnixSeconds) * 1_000_000n + BigInt(Math.floor(nowUs))) * 1000n;
  if (ns <= lastNs) ns = lastNs + 1n;
  return { name: `${objectName}.${ns.toString(16)}`, ns };
}
