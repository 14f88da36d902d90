/**
 * The `kube-proxy` actor of one node (cmd/kube-proxy, iptables or IPVS mode): informers on
 * Services and discovery/v1 EndpointSlices (`useEndpointSlices` is true unless userspace mode,
 * `server_others.go`), the {@link Proxier} state, and `syncProxyRules` run through a
 * {@link BoundedFrequencyRunner}: iptables `--iptables-min-sync-period` 1 s, maxInterval 1 h,
 * burst 2 (the 30 s `--iptables-sync-period` only drives the canary monitor, not modelled);
 * IPVS `--ipvs-min-sync-period` 0 (immediate), `--ipvs-sync-period` 30 s periodic. A sync takes
 * `syncBaseUs + syncPerRuleUs × rules` virtual µs (the full `iptables-restore`; IPVS syncs are
 * cheaper per rule by default) and its rules become effective when it ends, traced as one
 * `proxy.sync` record with the Services whose applied view changed (the full target list on the
 * proxier's first view of a Service, else what was added and removed: `TracedView`) — what routes this node's
 * new connections (harness/src/traffic). The first sync runs once both informers have synced
 * (`isInitialized`). Client: kube-proxy's own, no QPS limit modelled (it only lists and watches).
 */
import type { Actor, EndpointSlice, Service } from '@podsim/api';
import { seconds } from '@podsim/api';
import { shellActor, type ApiConnectionConfig } from '@podsim/controllers/actor/shell';
import { BoundedFrequencyRunner, type BfrDecision } from '../boundedFrequencyRunner.js';
import { Proxier, type TracedView, syncDurationUs, tracedView } from '../proxier.js';

export type ProxyMode = 'iptables' | 'ipvs';

/** Plain-data configuration (defaults are kube-proxy v1.22's; durations in virtual µs). */
export interface KubeProxyConfig extends ApiConnectionConfig {
  readonly nodeName: string;
  /** `--proxy-mode` (default iptables). */
  readonly mode?: ProxyMode;
  /** `--iptables-min-sync-period` / `--ipvs-min-sync-period` (1 s / 0). */
  readonly minSyncPeriodUs?: number;
  /** BoundedFrequencyRunner maxInterval: 1 h (iptables) / `--ipvs-sync-period` 30 s. */
  readonly syncPeriodUs?: number;
  /** `burstSyncs` (2). */
  readonly burstSyncs?: number;
  /** Sync duration model: fixed part (default 20 ms iptables, 5 ms IPVS). */
  readonly syncBaseUs?: number;
  /** Sync duration model: per rule (default 10 µs iptables, 1 µs IPVS). */
  readonly syncPerRuleUs?: number;
}

export const DEFAULT_PROXY_SETTINGS = {
  iptables: { minSyncPeriodUs: seconds(1), syncPeriodUs: seconds(3600), burstSyncs: 2, syncBaseUs: 20_000, syncPerRuleUs: 10 },
  ipvs: { minSyncPeriodUs: 0, syncPeriodUs: seconds(30), burstSyncs: 2, syncBaseUs: 5_000, syncPerRuleUs: 1 },
} as const;

/** The actor id of a node's kube-proxy. */
export function kubeProxyActorId(node: string): string {
  return `kube-proxy/${node}`;
}

function checkConfig(config: unknown): Required<Omit<KubeProxyConfig, keyof ApiConnectionConfig>> & ApiConnectionConfig {
  const c = (config ?? {}) as KubeProxyConfig;
  if (typeof c.nodeName !== 'string' || c.nodeName === '') throw new Error('kube-proxy: config.nodeName is required');
  const mode = c.mode ?? 'iptables';
  if (mode !== 'iptables' && mode !== 'ipvs') throw new Error(`kube-proxy: unknown mode ${JSON.stringify(mode)} (iptables or ipvs)`);
  const d = DEFAULT_PROXY_SETTINGS[mode];
  const r = {
    ...c,
    mode,
    minSyncPeriodUs: c.minSyncPeriodUs ?? d.minSyncPeriodUs,
    syncPeriodUs: c.syncPeriodUs ?? d.syncPeriodUs,
    burstSyncs: c.burstSyncs ?? d.burstSyncs,
    syncBaseUs: c.syncBaseUs ?? d.syncBaseUs,
    syncPerRuleUs: c.syncPerRuleUs ?? d.syncPerRuleUs,
  };
  // validation.go: minSyncPeriod must be ≥ 0 and ≤ syncPeriod.
  if (r.minSyncPeriodUs < 0 || r.minSyncPeriodUs > r.syncPeriodUs) throw new Error(`kube-proxy: minSyncPeriod must be between 0 and syncPeriod`);
  return r;
}

/** State exposed for tests. */
export interface KubeProxyState {
  proxier?: Proxier;
  bfr?: BoundedFrequencyRunner;
  syncs: number;
}

export function createActor(_id: string, config: unknown): Actor & { state: KubeProxyState } {
  const cfg = checkConfig(config);
  const state: KubeProxyState = { syncs: 0 };
  return {
    state,
    ...shellActor(cfg, (shell) => {
      const env = shell.env;
      const proxier = new Proxier(cfg.nodeName);
      const bfr = new BoundedFrequencyRunner(cfg.minSyncPeriodUs, cfg.syncPeriodUs, cfg.burstSyncs, env.now);
      state.proxier = proxier;
      state.bfr = bfr;
      let initialized = false;
      let timer: number | undefined;
      let timerAt = Infinity;
      const apply = (d: BfrDecision) => {
        if (d.timerAt !== timerAt) {
          if (timer !== undefined) env.cancel(timer);
          timerAt = d.timerAt;
          timer = env.after(timerAt - env.now, () => {
            timer = undefined;
            timerAt = Infinity;
            apply(bfr.onTimer(env.now));
          });
        }
        if (d.runNow) startSync();
      };
      const startSync = () => {
        const startUs = env.now;
        const tracing = env.tracing('proxy.sync');
        // The views before the sync, for the traced deltas.
        const prevs = tracing ? new Map([...proxier.dirtyKeys()].map((k) => [k, proxier.view(k)])) : undefined;
        const changes = proxier.syncProxyRules();
        const durationUs = syncDurationUs(proxier.ruleCount, cfg.syncBaseUs, cfg.syncPerRuleUs);
        const rules = proxier.ruleCount;
        env.after(durationUs, () => {
          state.syncs++;
          if (tracing) {
            const services: Record<string, TracedView | null> = {};
            for (const [k, v] of changes) services[k] = v ? tracedView(prevs!.get(k), v) : null;
            env.trace('proxy.sync', `syncProxyRules #${state.syncs} ${(durationUs / 1000).toFixed(1)}ms ${rules} rules, ${changes.size} service(s) changed`, {
              node: cfg.nodeName,
              mode: cfg.mode,
              minSyncPeriodUs: cfg.minSyncPeriodUs,
              burstSyncs: cfg.burstSyncs,
              startUs,
              durationUs,
              rules,
              services,
            });
          }
          apply(bfr.finished(env.now));
        });
      };
      const changed = () => {
        if (initialized) apply(bfr.run(env.now));
      };
      let synced = 0;
      const onSynced = () => {
        if (++synced < 2) return;
        initialized = true;
        apply(bfr.run(env.now));
      };
      const services = shell.informer<Service>('services', onSynced);
      const slices = shell.informer<EndpointSlice>('endpointslices', onSynced);
      const key = (o: { metadata: { namespace?: string; name?: string } }) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
      services.addEventHandler({
        onAdd: (s) => proxier.onService(key(s), s) && changed(),
        onUpdate: (_o, s) => proxier.onService(key(s), s) && changed(),
        onDelete: (s) => proxier.onService(key(s), undefined) && changed(),
      });
      slices.addEventHandler({
        onAdd: (s) => proxier.onSlice(s, false) && changed(),
        onUpdate: (_o, s) => proxier.onSlice(s, false) && changed(),
        onDelete: (s) => proxier.onSlice(s, true) && changed(),
      });
    }),
  };
}
