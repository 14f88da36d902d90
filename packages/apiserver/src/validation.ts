/**
 * Validation → 422 field errors: the parts of kubernetes v1.22 `pkg/apis/core/validation`
 * (ValidateObjectMeta, ValidatePodCreate/Update/StatusUpdate, ValidatePodBinding,
 * ValidateNode, ValidateEvent), `pkg/apis/apps/validation` (ValidateDeployment,
 * ValidateReplicaSet and their updates) and apimachinery `pkg/api/validation/objectmeta.go`
 * that podsim's users can trip. Deliberately partial: security contexts, affinity, volumes'
 * sources and resource names are not validated (resource quantities are: non-negative, integer
 * counts, requests ≤ limits; their format is the decoder's). Messages are upstream's.
 */
import type {
  Container,
  Deployment,
  Event,
  KubeObject,
  LabelSelector,
  Namespace,
  Node,
  ObjectMeta,
  Pod,
  PodSpec,
  PodTemplateSpec,
  ReplicaSet,
  Toleration,
} from '@podsim/api';
import { FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS, parseQuantity, quantityMilliValue } from '@podsim/api';
import { type FieldError, field, quote } from './errors.js';
import { semanticEqual } from './objects.js';
import { ValidStrings } from './validStrings.js';
import { labelSelectorAsSelector, labelsMatch, validateLabelKey } from '@podsim/api';

// ---- names (k8s.io/apimachinery/pkg/util/validation) -----------------------------------------

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/** `IsDNS1123Label`: error messages (empty = valid). */
export function isDNS1123Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(v)) errs.push(DNS1123_LABEL_MSG);
  return errs;
}

/** `IsDNS1123Subdomain`: error messages (empty = valid). */
export function isDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(v)) errs.push(DNS1123_SUBDOMAIN_MSG);
  return errs;
}

/** A `ValidateNameFunc`: `prefix` is true for generateName (a trailing `-` is allowed). */
export type NameFn = (name: string, prefix: boolean) => string[];

function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

/** `NameIsDNSSubdomain` (pods, nodes, deployments, …). */
export const nameIsDNSSubdomain: NameFn = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
/** `NameIsDNSLabel` (namespaces). */
export const nameIsDNSLabel: NameFn = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
/** `path.ValidatePathSegmentName` (events and the generic default). */
export const validatePathSegmentName: NameFn = (name, prefix) => {
  if (!prefix && (name === '.' || name === '..')) return [`may not be '${name}'`];
  for (const bad of ['/', '%']) if (name.includes(bad)) return [`may not contain '${bad}'`];
  return [];
};

// ---- object meta (apimachinery pkg/api/validation/objectmeta.go) -------------------------------

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * `validation.IsQualifiedName` (apimachinery pkg/util/validation): an optional DNS-subdomain
 * prefix and `/`, then a name part of at most 63 characters. Error messages (empty = valid).
 */
export function isQualifiedName(value: string): string[] {
  if (VALID_QUALIFIED_NAMES.has(value)) return [];
  const errs = qualifiedNameErrors(value);
  if (errs.length === 0) VALID_QUALIFIED_NAMES.add(value);
  return errs;
}

/** Qualified names and label values already found valid (matched against the regular expressions once). */
const VALID_QUALIFIED_NAMES = new ValidStrings();
const VALID_LABEL_VALUES = new ValidStrings();

function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0];
  else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [`a qualified name ${QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  if (!QUALIFIED_NAME.test(name)) errs.push(`name part ${QUALIFIED_NAME_MSG}`);
  return errs;
}

/** `validation.IsValidLabelValue`: at most 63 characters of the label-value alphabet. */
export function isValidLabelValue(v: string): string[] {
  if (VALID_LABEL_VALUES.has(v)) return [];
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!LABEL_VALUE.test(v)) {
    errs.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
  }
  if (errs.length === 0) VALID_LABEL_VALUES.add(v);
  return errs;
}

/** `ValidateLabels` (apimachinery pkg/apis/meta/v1/validation): qualified-name keys, label values. */
function validateLabels(labels: Record<string, string> | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    for (const m of isQualifiedName(k)) errs.push(field.invalid(path, k, m));
    for (const m of isValidLabelValue(v)) errs.push(field.invalid(path, v, m));
  }
  return errs;
}

/** UTF-8 byte length of a JS string (Go's `len(string)`). */
function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** `TotalAnnotationSizeLimitB`: keys and values of one object's annotations, in bytes (256 KiB). */
export const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;

/**
 * `ValidateAnnotations` (apimachinery pkg/api/validation/objectmeta.go): each key a qualified
 * name (case-insensitive), and the keys' and values' UTF-8 bytes together at most 262,144
 * (`metadata.annotations: Too long: must have at most 262144 bytes`).
 */
export function validateAnnotations(annotations: Record<string, string> | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(field.invalid(path, k, m));
    total += utf8Length(k) + (typeof v === 'string' ? utf8Length(v) : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_B) errs.push(field.tooLong(path, '', TOTAL_ANNOTATION_SIZE_LIMIT_B));
  return errs;
}

const STANDARD_FINALIZERS = ['kubernetes', FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS];

/** `ValidateFinalizerName` (apimachinery's qualified-name check plus `validateKubeFinalizerName`). */
export function validateFinalizerName(f: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const ke = validateLabelKey(f);
  if (ke) errs.push(field.invalid(path, f, ke));
  // validateKubeFinalizerName: an unqualified name must be a standard finalizer.
  if (!f.includes('/') && !STANDARD_FINALIZERS.includes(f)) {
    errs.push(field.invalid(path, f, 'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return errs;
}

function validateFinalizers(finalizers: readonly string[] | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const fs = finalizers ?? [];
  for (const f of fs) errs.push(...validateFinalizerName(f, path));
  if (fs.includes(FINALIZER_ORPHAN_DEPENDENTS) && fs.includes(FINALIZER_DELETE_DEPENDENTS)) {
    errs.push(field.invalid(path, fs, `finalizer ${FINALIZER_ORPHAN_DEPENDENTS} and ${FINALIZER_DELETE_DEPENDENTS} cannot be both set`));
  }
  return errs;
}

/** `ValidateObjectMeta` (create): name / generateName, namespace scope, labels, finalizers. */
export function validateObjectMeta(meta: ObjectMeta, requiresNamespace: boolean, nameFn: NameFn, path = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  if (meta.generateName) {
    for (const msg of nameFn(meta.generateName, true)) errs.push(field.invalid(`${path}.generateName`, meta.generateName, msg));
  }
  // If the generated name validates, but the calculated value does not, it's a problem with
  // generation, and we report it here. This may confuse users, but indicates a programming bug
  // and still must be validated. If there are multiple fields out of which one is required then
  // add an or as a separator.
  if (!meta.name) {
    errs.push(field.required(`${path}.name`, 'name or generateName is required'));
  } else {
    for (const msg of nameFn(meta.name, false)) errs.push(field.invalid(`${path}.name`, meta.name, msg));
  }
  if (requiresNamespace) {
    if (!meta.namespace) errs.push(field.required(`${path}.namespace`, ''));
    else for (const msg of isDNS1123Label(meta.namespace)) errs.push(field.invalid(`${path}.namespace`, meta.namespace, msg));
  } else if (meta.namespace) {
    errs.push(field.forbidden(`${path}.namespace`, 'not allowed on this type'));
  }
  if ((meta.generation ?? 0) < 0) errs.push(field.invalid(`${path}.generation`, meta.generation, 'must be greater than or equal to 0'));
  errs.push(...validateLabels(meta.labels, `${path}.labels`));
  errs.push(...validateAnnotations(meta.annotations, `${path}.annotations`));
  errs.push(...validateFinalizers(meta.finalizers, `${path}.finalizers`));
  return errs;
}

function immutable(newV: unknown, oldV: unknown, path: string): FieldError[] {
  return semanticEqual(newV, oldV) ? [] : [field.invalid(path, newV, 'field is immutable')];
}

/** `ValidateObjectMetaAccessorUpdate`. */
export function validateObjectMetaUpdate(n: ObjectMeta, o: ObjectMeta, path = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  // Finalizers cannot be added if the object is already being deleted.
  if (o.deletionTimestamp) {
    const extra = (n.finalizers ?? []).filter((f) => !(o.finalizers ?? []).includes(f));
    if (extra.length) {
      errs.push(
        field.forbidden(
          `${path}.finalizers`,
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${[...new Set(extra)].sort().map(quote).join(', ')}}`,
        ),
      );
    }
  }
  // Reject updates that don't specify a resource version
  if (!n.resourceVersion) errs.push(field.invalid(`${path}.resourceVersion`, n.resourceVersion ?? '', 'must be specified for an update'));
  if ((n.generation ?? 0) < (o.generation ?? 0)) errs.push(field.invalid(`${path}.generation`, n.generation ?? 0, 'must not be decremented'));
  errs.push(...immutable(n.name, o.name, `${path}.name`));
  errs.push(...immutable(n.namespace, o.namespace, `${path}.namespace`));
  errs.push(...immutable(n.uid, o.uid, `${path}.uid`));
  errs.push(...immutable(n.creationTimestamp, o.creationTimestamp, `${path}.creationTimestamp`));
  errs.push(...immutable(n.deletionTimestamp, o.deletionTimestamp, `${path}.deletionTimestamp`));
  errs.push(...immutable(n.deletionGracePeriodSeconds, o.deletionGracePeriodSeconds, `${path}.deletionGracePeriodSeconds`));
  errs.push(...validateLabels(n.labels, `${path}.labels`));
  errs.push(...validateAnnotations(n.annotations, `${path}.annotations`));
  return errs;
}

// ---- pods (pkg/apis/core/validation/validation.go) ---------------------------------------------

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

/** `validateHandler` + `validateProbe` (pkg/apis/core/validation/validation.go, v1.22.8), after `SetDefaults_Probe`. */
function validateProbe(probe: Container['livenessProbe'], path: string): FieldError[] {
  if (!probe) return [];
  const errs: FieldError[] = [];
  const handlers = (['exec', 'httpGet', 'tcpSocket'] as const).filter((h) => probe[h] !== undefined && probe[h] !== null);
  if (handlers.length === 0) errs.push(field.required(path, 'must specify a handler type'));
  for (const h of handlers.slice(1)) errs.push(field.forbidden(`${path}.${h}`, 'may not specify more than 1 handler type'));
  for (const k of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'] as const) {
    const v = probe[k];
    if (v !== undefined && v < 0) errs.push(field.invalid(`${path}.${k}`, v, 'must be greater than or equal to 0'));
  }
  return errs;
}

function validateContainers(containers: readonly Container[] | undefined, volumes: Set<string>, path: string, allNames: Set<string>, init = false): FieldError[] {
  const errs: FieldError[] = [];
  if (!containers || containers.length === 0) return [field.required(path, '')];
  containers.forEach((ctr, i) => {
    const idx = `${path}[${i}]`;
    if (!ctr.name) errs.push(field.required(`${idx}.name`, ''));
    else for (const msg of isDNS1123Label(ctr.name)) errs.push(field.invalid(`${idx}.name`, ctr.name, msg));
    if (allNames.has(ctr.name)) errs.push(field.duplicate(`${idx}.name`, ctr.name));
    else allNames.add(ctr.name);
    if (!ctr.image) errs.push(field.required(`${idx}.image`, ''));
    if (ctr.readinessProbe?.terminationGracePeriodSeconds !== undefined) {
      errs.push(field.invalid(`${idx}.readinessProbe.terminationGracePeriodSeconds`, ctr.readinessProbe.terminationGracePeriodSeconds, 'must not be set for readinessProbes'));
    }
    for (const k of ['livenessProbe', 'startupProbe'] as const) {
      const pr = ctr[k];
      if (pr && pr.successThreshold !== 1) errs.push(field.invalid(`${idx}.${k}.successThreshold`, pr.successThreshold, 'must be 1'));
    }
    for (const k of ['readinessProbe', 'livenessProbe', 'startupProbe'] as const) errs.push(...validateProbe(ctr[k], `${idx}.${k}`));
    if (init) {
      // validateInitContainers
      for (const k of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
        if (ctr[k]) errs.push(field.invalid(`${idx}.${k}`, ctr[k], 'must not be set for init containers'));
      }
    }
    switch (ctr.terminationMessagePolicy) {
      case 'File':
      case 'FallbackToLogsOnError':
        break;
      case undefined:
      case '':
        errs.push(field.required(`${idx}.terminationMessagePolicy`, "must be 'File' or 'FallbackToLogsOnError'"));
        break;
      default:
        errs.push(field.invalid(`${idx}.terminationMessagePolicy`, ctr.terminationMessagePolicy, "must be 'File' or 'FallbackToLogsOnError'"));
    }
    (ctr.ports ?? []).forEach((p, j) => {
      const pp = `${idx}.ports[${j}]`;
      if (!(p.containerPort >= 1 && p.containerPort <= 65535)) errs.push(field.invalid(`${pp}.containerPort`, p.containerPort, 'must be between 1 and 65535, inclusive'));
      // validateContainerPorts: a hostPort, when set, is a port number too (IsValidPortNum).
      if (p.hostPort !== undefined && p.hostPort !== 0 && !(p.hostPort >= 1 && p.hostPort <= 65535)) {
        errs.push(field.invalid(`${pp}.hostPort`, p.hostPort, 'must be between 1 and 65535, inclusive'));
      }
      if (!p.protocol) errs.push(field.required(`${pp}.protocol`, ''));
      else if (!PROTOCOLS.includes(p.protocol)) errs.push(field.notSupported(`${pp}.protocol`, p.protocol, PROTOCOLS));
    });
    (ctr.env ?? []).forEach((e, j) => {
      if (!e.name) errs.push(field.required(`${idx}.env[${j}].name`, ''));
    });
    (ctr.volumeMounts ?? []).forEach((m, j) => {
      const mp = `${idx}.volumeMounts[${j}]`;
      if (!m.name) errs.push(field.required(`${mp}.name`, ''));
      else if (!volumes.has(m.name)) errs.push(field.notFound(`${mp}.name`, m.name));
      if (!m.mountPath) errs.push(field.required(`${mp}.mountPath`, ''));
    });
    errs.push(...validateResourceRequirements(ctr.resources, `${idx}.resources`));
    if (!ctr.imagePullPolicy) errs.push(field.required(`${idx}.imagePullPolicy`, ''));
    else if (!PULL_POLICIES.includes(ctr.imagePullPolicy)) errs.push(field.notSupported(`${idx}.imagePullPolicy`, ctr.imagePullPolicy, PULL_POLICIES));
  });
  return errs;
}

/** Resources whose quantities must be whole numbers (`helper.IsIntegerResourceName`: standard ones; extended and hugepages are not simulated). */
const INTEGER_RESOURCES = new Set(['pods', 'services', 'replicationcontrollers', 'resourcequotas', 'secrets', 'configmaps', 'persistentvolumeclaims', 'services.nodeports', 'services.loadbalancers']);

/**
 * `ValidateResourceRequirements` (v1.22.8), the quantity checks: every limit and request is
 * non-negative (`ValidateNonnegativeQuantity`), counts are integers, and a request is at most
 * its limit. Quantities arrive well-formed (the decoder refused the others). Resource names are
 * not checked.
 */
function validateResourceRequirements(r: Container['resources'], path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!r) return errs;
  const check = (name: string, q: string | number, p: string) => {
    const v = parseQuantity(q);
    if (v === undefined) return;
    if (v < 0) errs.push(field.invalid(p, String(q), 'must be greater than or equal to 0'));
    if (INTEGER_RESOURCES.has(name) && (quantityMilliValue(q) ?? 0) % 1000 !== 0) errs.push(field.invalid(p, String(q), 'must be an integer'));
  };
  for (const [name, q] of Object.entries(r.limits ?? {})) check(name, q, `${path}.limits[${name}]`);
  for (const [name, q] of Object.entries(r.requests ?? {})) {
    check(name, q, `${path}.requests[${name}]`);
    const limit = r.limits?.[name];
    const lv = limit === undefined ? undefined : parseQuantity(limit);
    const rv = parseQuantity(q);
    if (lv !== undefined && rv !== undefined && rv > lv) errs.push(field.invalid(`${path}.requests`, String(q), `must be less than or equal to ${name} limit`));
  }
  return errs;
}

function validateTolerations(ts: readonly Toleration[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  ts.forEach((t, i) => {
    const idx = `${path}[${i}]`;
    if (t.operator === 'Exists' && t.value) errs.push(field.invalid(`${idx}.operator`, t, 'value must be empty when `operator` is \'Exists\''));
    if (t.operator && t.operator !== 'Exists' && t.operator !== 'Equal') errs.push(field.notSupported(`${idx}.operator`, t.operator, ['Equal', 'Exists']));
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') {
      errs.push(field.invalid(`${idx}.effect`, t.effect ?? '', "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
  });
  return errs;
}

/** `ValidatePodSpec`. */
export function validatePodSpec(spec: PodSpec | undefined, path: string): FieldError[] {
  if (!spec) return [field.required(path, '')];
  const errs: FieldError[] = [];
  const volumes = new Set<string>();
  (spec.volumes ?? []).forEach((v, i) => {
    const vp = `${path}.volumes[${i}]`;
    if (!v.name) errs.push(field.required(`${vp}.name`, ''));
    else {
      for (const msg of isDNS1123Label(v.name)) errs.push(field.invalid(`${vp}.name`, v.name, msg));
      if (volumes.has(v.name)) errs.push(field.duplicate(`${vp}.name`, v.name));
      volumes.add(v.name);
    }
  });
  const names = new Set<string>();
  errs.push(...validateContainers(spec.containers, volumes, `${path}.containers`, names));
  if (spec.initContainers?.length) errs.push(...validateContainers(spec.initContainers, volumes, `${path}.initContainers`, names, true));
  if (!spec.restartPolicy) errs.push(field.required(`${path}.restartPolicy`, ''));
  else if (!RESTART_POLICIES.includes(spec.restartPolicy)) errs.push(field.notSupported(`${path}.restartPolicy`, spec.restartPolicy, RESTART_POLICIES));
  if (!spec.dnsPolicy) errs.push(field.required(`${path}.dnsPolicy`, ''));
  else if (!DNS_POLICIES.includes(spec.dnsPolicy)) errs.push(field.notSupported(`${path}.dnsPolicy`, spec.dnsPolicy, DNS_POLICIES));
  errs.push(...validateLabels(spec.nodeSelector, `${path}.nodeSelector`));
  if (spec.nodeName) for (const msg of isDNS1123Subdomain(spec.nodeName)) errs.push(field.invalid(`${path}.nodeName`, spec.nodeName, msg));
  if (spec.activeDeadlineSeconds !== undefined && (spec.activeDeadlineSeconds < 1 || spec.activeDeadlineSeconds > 2147483647)) {
    errs.push(field.invalid(`${path}.activeDeadlineSeconds`, spec.activeDeadlineSeconds, 'must be between 1 and 2147483647, inclusive'));
  }
  if (spec.hostname) for (const msg of isDNS1123Label(spec.hostname)) errs.push(field.invalid(`${path}.hostname`, spec.hostname, msg));
  if (spec.subdomain) for (const msg of isDNS1123Label(spec.subdomain)) errs.push(field.invalid(`${path}.subdomain`, spec.subdomain, msg));
  if (spec.tolerations?.length) errs.push(...validateTolerations(spec.tolerations, `${path}.tolerations`));
  return errs;
}

/** `ValidatePodCreate` (= validatePodMetadataAndSpec for podsim's fields). */
export function validatePodCreate(pod: Pod): FieldError[] {
  return [...validateObjectMeta(pod.metadata, true, nameIsDNSSubdomain), ...validatePodSpec(pod.spec, 'spec')];
}

/** The spec keys that differ between two pod specs (the "diff" in the Forbidden message). */
function changedKeys(a: object, b: object): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => !semanticEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])).sort();
}

/** `ValidatePodUpdate`: only images, activeDeadlineSeconds and added tolerations may change. */
export function validatePodUpdate(n: Pod, o: Pod): FieldError[] {
  const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
  errs.push(...validatePodSpec(n.spec, 'spec'));
  const nc = n.spec?.containers ?? [];
  const oc = o.spec?.containers ?? [];
  if (nc.length !== oc.length) {
    errs.push(field.forbidden('spec.containers', 'pod updates may not add or remove containers'));
    return errs;
  }
  const nic = n.spec?.initContainers ?? [];
  const oic = o.spec?.initContainers ?? [];
  if (nic.length !== oic.length) {
    errs.push(field.forbidden('spec.initContainers', 'pod updates may not add or remove containers'));
    return errs;
  }
  const nAds = n.spec?.activeDeadlineSeconds;
  const oAds = o.spec?.activeDeadlineSeconds;
  if (nAds !== undefined) {
    if (nAds < 0 || nAds > 2147483647) {
      errs.push(field.invalid('spec.activeDeadlineSeconds', nAds, 'must be between 0 and 2147483647, inclusive'));
      return errs;
    }
    if (oAds !== undefined && oAds < nAds) {
      errs.push(field.invalid('spec.activeDeadlineSeconds', nAds, 'must be less than or equal to previous value'));
      return errs;
    }
  } else if (oAds !== undefined) {
    errs.push(field.invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'));
  }
  // Allow only additions to tolerations updates.
  const oldTs = o.spec?.tolerations ?? [];
  const newTs = n.spec?.tolerations ?? [];
  for (const ot of oldTs) {
    if (!newTs.some((nt) => semanticEqual({ ...nt, tolerationSeconds: undefined }, { ...ot, tolerationSeconds: undefined }))) {
      errs.push(field.forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds'));
      break;
    }
  }
  if (semanticEqual(n.spec, o.spec)) return errs;
  // Munge the updatable fields, then compare.
  const munged: PodSpec = {
    ...n.spec,
    containers: nc.map((c, i) => ({ ...c, image: oc[i].image })),
    activeDeadlineSeconds: oAds,
    tolerations: o.spec?.tolerations,
  };
  if (n.spec?.initContainers) munged.initContainers = nic.map((c, i) => ({ ...c, image: oic[i].image }));
  if (!semanticEqual(munged, o.spec)) {
    errs.push(
      field.forbidden(
        'spec',
        `pod updates may not change fields other than \`spec.containers[*].image\`, \`spec.initContainers[*].image\`, \`spec.activeDeadlineSeconds\` or \`spec.tolerations\` (only additions to existing tolerations)\n  changed: ${changedKeys(munged, o.spec ?? {}).join(', ')}`,
      ),
    );
  }
  return errs;
}

/** `ValidatePodStatusUpdate`. */
export function validatePodStatusUpdate(n: Pod, o: Pod): FieldError[] {
  const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
  if ((n.spec?.nodeName ?? '') !== (o.spec?.nodeName ?? '')) errs.push(field.forbidden('status.nodeName', 'may not be changed directly'));
  const nn = n.status?.nominatedNodeName;
  if (nn && nn !== o.status?.nominatedNodeName) for (const msg of isDNS1123Subdomain(nn)) errs.push(field.invalid('status.nominatedNodeName', nn, msg));
  // If pod should not restart, make sure the status update does not transition any terminated
  // containers to a non-terminated state (ValidateContainerStateTransition).
  if (o.spec?.restartPolicy !== 'Always') {
    for (const [list, path] of [
      ['containerStatuses', 'status.containerStatuses'],
      ['initContainerStatuses', 'status.initContainerStatuses'],
    ] as const) {
      const olds = o.status?.[list] ?? [];
      (n.status?.[list] ?? []).forEach((ns, i) => {
        const old = olds.find((x) => x.name === ns.name);
        if (!old?.state?.terminated) return;
        if (o.spec?.restartPolicy === 'OnFailure' && old.state.terminated.exitCode !== 0) return;
        if (!ns.state?.terminated) errs.push(field.forbidden(`${path}[${i}].state`, 'may not be transitioned to non-terminated state'));
      });
    }
  }
  for (const [i, ip] of (n.status?.podIPs ?? []).entries()) {
    if (!/^(\d{1,3}\.){3}\d{1,3}$/.test(ip.ip) && !ip.ip.includes(':')) errs.push(field.invalid(`status.podIPs[${i}]`, ip.ip, 'must be a valid IP address'));
  }
  return errs;
}

/** `ValidatePodBinding`. */
export function validatePodBinding(target: { kind?: string; name?: string } | undefined): FieldError[] {
  const errs: FieldError[] = [];
  if (target?.kind && target.kind !== 'Node') errs.push(field.notSupported('target.kind', target.kind, ['Node', '<empty>']));
  if (!target?.name) errs.push(field.required('target.name', ''));
  return errs;
}

// ---- apps (pkg/apis/apps/validation/validation.go) ----------------------------------------------

export function validateNonNegative(v: number | undefined, path: string): FieldError[] {
  return v !== undefined && v < 0 ? [field.invalid(path, v, 'must be greater than or equal to 0')] : [];
}

function validateSelectorAndTemplate(selector: LabelSelector | undefined, template: PodTemplateSpec | undefined, path: string, onlyAlways: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (!selector) errs.push(field.required(`${path}.selector`, ''));
  else {
    const sel = labelSelectorAsSelector(selector);
    if ('error' in sel) errs.push(field.invalid(`${path}.selector`, selector, sel.error));
    else if (sel.requirements.length === 0) errs.push(field.invalid(`${path}.selector`, selector, 'empty selector is invalid for deployment'));
    else if (!labelsMatch(sel, template?.metadata?.labels)) {
      errs.push(field.invalid(`${path}.template.metadata.labels`, template?.metadata?.labels ?? {}, '`selector` does not match template `labels`'));
    }
  }
  if (!template) {
    errs.push(field.required(`${path}.template`, ''));
    return errs;
  }
  errs.push(...validateLabels(template.metadata?.labels, `${path}.template.metadata.labels`));
  errs.push(...validatePodSpec(template.spec, `${path}.template.spec`));
  if (onlyAlways && template.spec?.restartPolicy && template.spec.restartPolicy !== 'Always') {
    errs.push(field.notSupported(`${path}.template.spec.restartPolicy`, template.spec.restartPolicy, ['Always']));
  }
  if (template.spec?.activeDeadlineSeconds !== undefined) {
    errs.push(field.forbidden(`${path}.template.spec.activeDeadlineSeconds`, 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  }
  return errs;
}

/** `ValidatePositiveIntOrPercent`: a non-negative int, or a percent string `N%`. */
export function validatePositiveIntOrPercent(v: number | string | undefined, path: string): FieldError[] {
  if (v === undefined) return [];
  if (typeof v === 'number') return v < 0 ? [field.invalid(path, v, 'must be greater than or equal to 0')] : [];
  return /^[0-9]+%$/.test(v) ? [] : [field.invalid(path, v, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")];
}

/** `IsNotMoreThan100Percent`: a well-formed percent string is at most `100%` (ints are not checked). */
export function isNotMoreThan100Percent(v: number | string | undefined, path: string): FieldError[] {
  if (typeof v !== 'string' || !/^[0-9]+%$/.test(v)) return [];
  return Number(v.slice(0, -1)) > 100 ? [field.invalid(path, v, 'must not be greater than 100%')] : [];
}

/** The number in an int-or-percent (`25%` → 25), NaN for a malformed string, undefined when unset. */
function intOrPercentValue(v: number | string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  return m ? Number(m[1]) : NaN;
}

/** `ValidateDeployment` (create). */
export function validateDeployment(d: Deployment): FieldError[] {
  const errs = validateObjectMeta(d.metadata, true, nameIsDNSSubdomain);
  const spec = d.spec;
  if (!spec) return [...errs, field.required('spec', '')];
  errs.push(...validateNonNegative(spec.replicas, 'spec.replicas'));
  errs.push(...validateSelectorAndTemplate(spec.selector, spec.template, 'spec', true));
  const st = spec.strategy;
  if (st) {
    if (st.type !== 'Recreate' && st.type !== 'RollingUpdate') {
      errs.push(st.type ? field.notSupported('spec.strategy.type', st.type, ['Recreate', 'RollingUpdate']) : field.required('spec.strategy.type', ''));
    }
    if (st.type === 'Recreate' && st.rollingUpdate) {
      errs.push(field.forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
    }
    if (st.type === 'RollingUpdate' && st.rollingUpdate) {
      errs.push(...validatePositiveIntOrPercent(st.rollingUpdate.maxSurge, 'spec.strategy.rollingUpdate.maxSurge'));
      errs.push(...validatePositiveIntOrPercent(st.rollingUpdate.maxUnavailable, 'spec.strategy.rollingUpdate.maxUnavailable'));
      errs.push(...isNotMoreThan100Percent(st.rollingUpdate.maxUnavailable, 'spec.strategy.rollingUpdate.maxUnavailable'));
      if (intOrPercentValue(st.rollingUpdate.maxSurge) === 0 && intOrPercentValue(st.rollingUpdate.maxUnavailable) === 0) {
        errs.push(field.invalid('spec.strategy.rollingUpdate.maxUnavailable', st.rollingUpdate.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
      }
    }
  }
  errs.push(...validateNonNegative(spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...validateNonNegative(spec.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
  if (spec.progressDeadlineSeconds !== undefined) {
    errs.push(...validateNonNegative(spec.progressDeadlineSeconds, 'spec.progressDeadlineSeconds'));
    if (spec.progressDeadlineSeconds <= (spec.minReadySeconds ?? 0)) {
      errs.push(field.invalid('spec.progressDeadlineSeconds', spec.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
    }
  }
  return errs;
}

/** `ValidateDeploymentUpdate` + the apps/v1 selector immutability check. */
export function validateDeploymentUpdate(n: Deployment, o: Deployment): FieldError[] {
  const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
  errs.push(...validateDeployment({ ...n, metadata: { ...n.metadata, generateName: undefined } }).filter((e) => !e.field.startsWith('metadata.')));
  if (!semanticEqual(n.spec?.selector, o.spec?.selector)) errs.push(field.invalid('spec.selector', n.spec?.selector, 'field is immutable'));
  return errs;
}

/** `ValidateReplicaSet` (create). */
export function validateReplicaSet(rs: ReplicaSet): FieldError[] {
  const errs = validateObjectMeta(rs.metadata, true, nameIsDNSSubdomain);
  if (!rs.spec) return [...errs, field.required('spec', '')];
  errs.push(...validateNonNegative(rs.spec.replicas, 'spec.replicas'));
  errs.push(...validateNonNegative(rs.spec.minReadySeconds, 'spec.minReadySeconds'));
  errs.push(...validateSelectorAndTemplate(rs.spec.selector, rs.spec.template, 'spec', true));
  return errs;
}

/** `ValidateReplicaSetUpdate` + selector immutability (apps/v1). */
export function validateReplicaSetUpdate(n: ReplicaSet, o: ReplicaSet): FieldError[] {
  const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
  errs.push(...validateReplicaSet(n).filter((e) => !e.field.startsWith('metadata.')));
  if (!semanticEqual(n.spec?.selector, o.spec?.selector)) errs.push(field.invalid('spec.selector', n.spec?.selector, 'field is immutable'));
  return errs;
}

/** Status updates of RS / Deployment: counts non-negative (`ValidateReplicaSetStatus`). */
export function validateWorkloadStatusUpdate(n: ReplicaSet | Deployment, o: ReplicaSet | Deployment): FieldError[] {
  const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
  const st = (n.status ?? {}) as Record<string, unknown>;
  for (const k of ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'updatedReplicas', 'unavailableReplicas', 'observedGeneration']) {
    if (typeof st[k] === 'number') errs.push(...validateNonNegative(st[k] as number, `status.${k}`));
  }
  return errs;
}

// ---- other kinds --------------------------------------------------------------------------------

/** `ValidateNode`: metadata, and `spec.taints` (reported under `metadata.taints`, as upstream's path is). */
export function validateNode(node: Node): FieldError[] {
  return [...validateObjectMeta(node.metadata, false, nameIsDNSSubdomain), ...validateNodeSpecTaints(node)];
}

/** The `spec.taints` part of `ValidateNode` (path `metadata.taints`, upstream's), also run on every Node update. */
export function validateNodeSpecTaints(node: Node): FieldError[] {
  const taints = node.spec?.taints ?? [];
  return taints.length > 0 ? validateNodeTaints(taints, 'metadata.taints') : [];
}

/** The taint effects `validateTaintEffect` accepts (NoScheduleNoAdmit is not implemented upstream). */
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/**
 * `validateNodeTaints` (pkg/apis/core/validation): each key a qualified name, each value a label
 * value, each effect required and one of {@link TAINT_EFFECTS} (`validateTaintEffect`, allowEmpty
 * false), and no two taints with the same key and effect.
 */
function validateNodeTaints(taints: readonly { key?: string; value?: string; effect?: string }[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  taints.forEach((t, i) => {
    const idx = `${path}[${i}]`;
    for (const m of isQualifiedName(t.key ?? '')) errs.push(field.invalid(`${idx}.key`, t.key ?? '', m));
    const vm = isValidLabelValue(t.value ?? '');
    if (vm.length > 0) errs.push(field.invalid(`${idx}.value`, t.value ?? '', vm.join(';')));
    const effect = t.effect ?? '';
    if (effect === '') errs.push(field.required(`${idx}.effect`));
    else if (!TAINT_EFFECTS.includes(effect)) errs.push(field.notSupported(`${idx}.effect`, effect, TAINT_EFFECTS));
    const key = `${t.key ?? ''}\u0000${effect}`;
    if (seen.has(key)) errs.push({ ...field.duplicate(idx, t), detail: 'taints must be unique by key and effect pair' });
    seen.add(key);
  });
  return errs;
}

/** `ValidateNamespace`: metadata and each `spec.finalizers[i]`. */
export function validateNamespace(ns: Namespace): FieldError[] {
  return [...validateObjectMeta(ns.metadata, false, nameIsDNSLabel), ...validateNamespaceFinalizers(ns)];
}

function validateNamespaceFinalizers(ns: Namespace): FieldError[] {
  return (ns.spec?.finalizers ?? []).flatMap((f, i) => validateFinalizerName(f, `spec.finalizers[${i}]`));
}

/** `ValidateNamespaceStatusUpdate`: the phase must agree with `deletionTimestamp`. */
export function validateNamespaceStatusUpdate(n: Namespace, o: Namespace): FieldError[] {
  const errs = validateObjectMetaUpdate(n.metadata, o.metadata);
  const phase = n.status?.phase ?? '';
  if (!n.metadata.deletionTimestamp) {
    if (phase !== 'Active') errs.push(field.invalid('status.Phase', phase, "may only be 'Active' if `deletionTimestamp` is empty"));
  } else if (phase !== 'Terminating') {
    errs.push(field.invalid('status.Phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"));
  }
  return errs;
}

/** `ValidateNamespaceFinalizeUpdate`: metadata, and each `spec.finalizers[i]` a valid finalizer name. */
export function validateNamespaceFinalizeUpdate(n: Namespace, o: Namespace): FieldError[] {
  return [...validateObjectMetaUpdate(n.metadata, o.metadata), ...validateNamespaceFinalizers(n)];
}

/** `ValidateEventCreate` → `legacyValidateEvent` (core/v1 events without eventTime). */
export function validateEvent(ev: Event): FieldError[] {
  const errs = validateObjectMeta(ev.metadata, true, validatePathSegmentName);
  const io = ev.involvedObject;
  if (!io) return [...errs, field.required('involvedObject', '')];
  if (!ev.eventTime) {
    // Make sure event.Namespace and the involvedObject.Namespace agree.
    if (!io.namespace) {
      // event.Namespace must also be empty (or "default", for compatibility with old clients)
      if (ev.metadata.namespace && ev.metadata.namespace !== 'default') {
        errs.push(field.invalid('involvedObject.namespace', io.namespace ?? '', 'does not match event.namespace'));
      }
    } else if (ev.metadata.namespace !== io.namespace) {
      errs.push(field.invalid('involvedObject.namespace', io.namespace, 'does not match event.namespace'));
    }
  }
  return errs;
}

/** Generic update validation for kinds without a specific one. */
export function validateGenericUpdate(n: KubeObject, o: KubeObject): FieldError[] {
  return validateObjectMetaUpdate(n.metadata, o.metadata);
}
