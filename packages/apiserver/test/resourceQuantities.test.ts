/**
 * Container resources and host ports as kube-apiserver v1.22.8 checks them on create (issue #23
 * item 4): a malformed quantity (`cpu: lots`) is the decoder's 400 (resource.Quantity's
 * UnmarshalJSON → ParseQuantity), a negative one (`memory: -16Gi`) and a request above its limit
 * are ValidateResourceRequirements' 422, a hostPort out of range is validateContainerPorts' 422.
 * podsim's apiserver took all of them before.
 */
import test from 'ava';
import type { Pod, Status } from '@podsim/api';
import { Harness } from './helpers.js';

const create = (h: Harness, container: Record<string, unknown>) =>
  h.req({ type: 'ApiCreate', resource: 'pods', namespace: 'default', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox', ...container }] } } as unknown as Pod });

test('bug: cpu: lots was stored — now 400 with ParseQuantity\'s message', (t) => {
  const r = create(new Harness(), { resources: { requests: { cpu: 'lots' } } });
  t.is(r.code, 400);
  t.is((r.body as Status).message, `Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
});

test('bug: memory: -16Gi and hostPort 70000 were stored — now 422 with one cause per field', (t) => {
  const r = create(new Harness(), { resources: { limits: { memory: '-16Gi' }, requests: { cpu: '2' } }, ports: [{ containerPort: 80, hostPort: 70000 }] });
  t.is(r.code, 422);
  const causes = (r.body as Status).details?.causes ?? [];
  t.deepEqual(
    causes.map((c) => [c.field, c.message]),
    [
      ['spec.containers[0].ports[0].hostPort', 'Invalid value: 70000: must be between 1 and 65535, inclusive'],
      ['spec.containers[0].resources.limits[memory]', 'Invalid value: "-16Gi": must be greater than or equal to 0'],
      // Defaulting copied the limit into the unset request (SetDefaults_Pod), as upstream does.
      ['spec.containers[0].resources.requests[memory]', 'Invalid value: "-16Gi": must be greater than or equal to 0'],
    ],
  );
});

test('a request above its limit is refused; well-formed quantities in every notation are accepted', (t) => {
  const over = create(new Harness(), { resources: { limits: { cpu: '500m' }, requests: { cpu: '1' } } });
  t.is(over.code, 422);
  t.regex((over.body as Status).message ?? '', /spec\.containers\[0\]\.resources\.requests: Invalid value: "1": must be less than or equal to cpu limit/);
  for (const q of ['100m', '0.5', '1.5Gi', '2e3', '128974848', '129M', '500u', '1Ki']) {
    const r = create(new Harness(), { resources: { requests: { memory: q } } });
    t.is(r.code, 201, `${q}: ${(r.body as Status).message}`);
  }
});
