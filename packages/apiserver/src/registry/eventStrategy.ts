/**
 * core/v1 Event strategy: kubernetes v1.22 `pkg/registry/core/event/strategy.go` (namespaced,
 * create-on-update allowed, no garbage collection). Simplification: no 1 h TTL.
 */
import type { Event } from '@podsim/api';
import { validateEvent, validateGenericUpdate } from '../validation.js';
import type { RESTStrategy } from './strategy.js';

export const eventStrategy: RESTStrategy<Event> = {
  namespaceScoped: true,
  groupKind: { group: '', kind: 'Event' },
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: validateEvent,
  validateUpdate: validateGenericUpdate,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  defaultGarbageCollectionPolicy: () => 'Unsupported',
};
