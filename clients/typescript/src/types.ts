// Type helpers that turn the generated `operations` interface into method signatures:
// the generated methods say `Query<"listDeals">`, `Body<"createDeal">`, `Result<"getDeal">`.
import type { operations } from "./generated/schema.js";
import type { RequestOptions } from "./options.js";

/** An operationId of the document (webhook payload "operations" included). */
export type OperationId = keyof operations;

type JsonContent<R> = R extends { content: { "application/json": infer B } } ? B : never;
type Responses<K extends OperationId> = operations[K]["responses"];
type SuccessStatus = 200 | 201 | 202 | 204;

/** Path parameters of an operation, by name. */
export type PathParams<K extends OperationId> = NonNullable<operations[K]["parameters"]["path"]>;
/** Query parameters of an operation. */
export type Query<K extends OperationId> = NonNullable<operations[K]["parameters"]["query"]>;
/** The JSON request body of an operation. */
export type Body<K extends OperationId> = JsonContent<NonNullable<operations[K]["requestBody"]>>;
/** The JSON body of an operation's success response(s). */
export type Result<K extends OperationId> = JsonContent<Responses<K>[Extract<keyof Responses<K>, SuccessStatus>]>;
/** One element of a list operation's `data`. */
export type Item<K extends OperationId> = Result<K> extends { data: (infer I)[] } ? I : never;

/** What a generated method hands to the transport. */
export interface ApiRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The path template of the document, e.g. `/v1/deals/{id}`. */
  path: string;
  pathParams?: Record<string, string>;
  query?: object | undefined;
  body?: unknown;
  options?: RequestOptions | undefined;
}
