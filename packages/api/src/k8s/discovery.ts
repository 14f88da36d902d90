/**
 * The Service side of core/v1 and discovery.k8s.io/v1 (k8s.io/api v0.22.8 `core/v1/types.go`
 * Service, ServiceSpec, ServicePort, Endpoints, EndpointSubset, EndpointAddress, EndpointPort;
 * `discovery/v1/types.go` EndpointSlice, Endpoint, EndpointConditions, EndpointPort). JSON wire
 * shape; optional fields as upstream marks them `omitempty`. The well-known labels and
 * annotations the endpoint controllers and kube-proxy read are here too (`discovery/v1/
 * well_known_labels.go`, `core/v1/annotation_key_constants.go`).
 */
import type { KubeObject } from './meta.js';
import type { ObjectReference } from './core.js';

export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type ServiceAffinity = 'ClientIP' | 'None';
export type ServiceExternalTrafficPolicyType = 'Cluster' | 'Local';
export type ServiceInternalTrafficPolicyType = 'Cluster' | 'Local';

export interface ServicePort {
  name?: string;
  protocol?: Protocol;
  appProtocol?: string;
  port: number;
  /** A container port number or name (`intstr.IntOrString`); defaults to `port`. */
  targetPort?: number | string;
  nodePort?: number;
}

export interface SessionAffinityConfig {
  clientIP?: { timeoutSeconds?: number };
}

export interface ServiceSpec {
  ports?: ServicePort[];
  selector?: Record<string, string>;
  /** `None` for a headless Service; allocated from the service CIDR when empty. */
  clusterIP?: string;
  clusterIPs?: string[];
  type?: ServiceType;
  externalIPs?: string[];
  sessionAffinity?: ServiceAffinity;
  loadBalancerIP?: string;
  externalName?: string;
  externalTrafficPolicy?: ServiceExternalTrafficPolicyType;
  healthCheckNodePort?: number;
  publishNotReadyAddresses?: boolean;
  sessionAffinityConfig?: SessionAffinityConfig;
  ipFamilies?: ('IPv4' | 'IPv6')[];
  ipFamilyPolicy?: 'SingleStack' | 'PreferDualStack' | 'RequireDualStack';
  allocateLoadBalancerNodePorts?: boolean;
  internalTrafficPolicy?: ServiceInternalTrafficPolicyType;
}

export interface ServiceStatus {
  loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] };
}

export interface Service extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Service';
  spec: ServiceSpec;
  status?: ServiceStatus;
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol?: Protocol;
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

export interface Endpoints extends KubeObject {
  apiVersion?: 'v1';
  kind?: 'Endpoints';
  subsets?: EndpointSubset[];
}

/** discovery/v1 `EndpointConditions`: nil means unknown (kube-proxy reads nil ready/serving as true). */
export interface EndpointConditions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface SliceEndpoint {
  addresses: string[];
  conditions: EndpointConditions;
  hostname?: string;
  targetRef?: ObjectReference;
  nodeName?: string;
  zone?: string;
}

export interface SliceEndpointPort {
  name?: string;
  protocol?: Protocol;
  port?: number;
  appProtocol?: string;
}

export interface EndpointSlice extends KubeObject {
  apiVersion?: 'discovery.k8s.io/v1';
  kind?: 'EndpointSlice';
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  endpoints: SliceEndpoint[];
  ports?: SliceEndpointPort[];
}

/** `discovery.LabelServiceName`: the Service a slice belongs to. */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
/** `discovery.LabelManagedBy`. */
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
/** The EndpointSlice controller's `managed-by` value (`controllerName`). */
export const ENDPOINTSLICE_CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
/** `v1.IsHeadlessService` label the controllers set on headless Services' objects. */
export const LABEL_HEADLESS_SERVICE = 'service.kubernetes.io/headless';
/** `v1.EndpointsLastChangeTriggerTime`. */
export const ANNOTATION_LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';
/** `v1.EndpointsOverCapacity` (value `truncated`, 1.22+). */
export const ANNOTATION_OVER_CAPACITY = 'endpoints.kubernetes.io/over-capacity';
/** `v1.TolerateUnreadyEndpointsAnnotation` (deprecated; overrides publishNotReadyAddresses when it parses). */
export const ANNOTATION_TOLERATE_UNREADY = 'service.alpha.kubernetes.io/tolerate-unready-endpoints';
/** The EndpointSliceMirroring controller's `managed-by` value (`controllerName`, pkg/controller/endpointslicemirroring). */
export const ENDPOINTSLICEMIRRORING_CONTROLLER_NAME = 'endpointslicemirroring-controller.k8s.io';
/** `discovery.LabelSkipMirror`: an Endpoints object labelled `true` is not mirrored. */
export const LABEL_SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror';
/** `resourcelock.LeaderElectionRecordAnnotationKey`: Endpoints used as a leader-election lock are not mirrored. */
export const ANNOTATION_LEADER_ELECTION = 'control-plane.alpha.kubernetes.io/leader';
