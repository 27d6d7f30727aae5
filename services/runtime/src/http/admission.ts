// The seam in front of the HTTP app: a program's request admissions (such as ingest's per-key admission) each hand a
// request to the next, now or later (program.ts chains them with `admitted`); a request that waited keeps its arrival
// time, so that the app's duration (app.ts) counts from when it arrived rather than from when it entered.
import type { IncomingMessage, ServerResponse } from 'node:http';

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** Something in front of the app that hands each request to `next`, now or later. */
export interface RequestAdmission {
  admit(request: IncomingMessage, response: ServerResponse, next: RequestHandler): void;
  /** The server is closing: stop leaving connections unread, and read again every one left so far. */
  release?(): void;
}

/** When each request that waited in an admission arrived (performance.now()): the admission sets it as it waits. */
export const arrivals = new WeakMap<IncomingMessage, number>();

/** When the request arrived, if it waited in front of the app (undefined: it entered as it arrived). */
export function arrivedAt(request: IncomingMessage): number | undefined {
  return arrivals.get(request);
}

/** The app's handler behind the admissions, the first one outermost. */
export function admitted(admissions: readonly RequestAdmission[], app: RequestHandler): RequestHandler {
  return admissions.reduceRight<RequestHandler>(
    (next, admission) => (request, response) => admission.admit(request, response, next),
    app,
  );
}
