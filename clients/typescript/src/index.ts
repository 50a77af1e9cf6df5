// @revops/client: the Revops API for Node 20.3+ servers. See README.md.
export { Revops } from "./client.js";
export type { RevopsOptions, RequestOptions } from "./options.js";
export { RevopsError, RevopsConnectionError, type ErrorType, type Fault } from "./errors.js";
export {
  Webhooks,
  verifyWebhook,
  isEventType,
  WebhookVerificationError,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookFailure,
  type WebhookHeaders,
} from "./webhooks.js";
export { operationIds } from "./generated/operations.js";
export type { Body, Item, OperationId, PathParams, Query, Result } from "./types.js";
export type * from "./generated/models.js";
export type { components, operations, paths, webhooks } from "./generated/schema.js";
export { VERSION } from "./version.js";
