// What both transports share: the encoding, so that the in-process transport carries exactly the NATS bytes, and the
// serving side's bookkeeping (handlers in flight, how a served service stops).
import {
  create,
  type DescMessage,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from '@bufbuild/protobuf';
import { isListedStatus, toErrorCode } from '../contracts/error-codes.ts';
import { ServiceErrorSchema } from '../contracts/gen/rewards/v1/errors_pb.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { DeadlinePassedError, withDeadline } from './deadline.ts';
import {
  type CallContext,
  EncodedNotice,
  type EndpointBinding,
  type Operation,
  type ServedService,
  type Topic,
} from './operation.ts';

export type HandlerOutcome =
  | { ok: true; data: Uint8Array }
  | { ok: false; status: number; code: string; data: Uint8Array };

export function encodeRequest<I extends DescMessage>(
  operation: Operation<I>,
  request: MessageInitShape<I>,
): Uint8Array {
  if (operation.wire) return operation.wire.encode(request);
  return toBinary(operation.request, create(operation.request, request));
}

export function decodeReply<O extends DescMessage>(
  operation: Operation<DescMessage, O>,
  data: Uint8Array,
): MessageShape<O> {
  // A wired operation's reply is its codec's shape (callWired gives it its type).
  if (operation.wire) return operation.wire.decode(data) as MessageShape<O>;
  return fromBinary(operation.reply, data);
}

export function encodeError(error: AppError): Uint8Array {
  const extraJson: Record<string, string> = {};
  for (const [key, value] of Object.entries(error.extra ?? {})) extraJson[key] = JSON.stringify(value);
  return toBinary(
    ServiceErrorSchema,
    create(ServiceErrorSchema, { status: error.status, code: error.code, message: error.message, extraJson }),
  );
}

export function decodeError(data: Uint8Array): AppError {
  const message = fromBinary(ServiceErrorSchema, data);
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(message.extraJson)) extra[key] = JSON.parse(value);
  const code = toErrorCode(message.code);
  // A code with a status its table does not list is another program's bug: reported as ours, never passed on.
  if (!isListedStatus(code, message.status)) {
    return new AppError('internal_error', 'The service failed to handle the request.');
  }
  return AppError.withStatus(message.status, code, message.message, Object.keys(extra).length ? extra : undefined);
}

/** The answer to work dropped because its request's deadline had passed before it started: nothing was done. */
export const LATE_MESSAGE =
  "The request's deadline passed before the work started; nothing was stored or changed. Retry later.";

/**
 * The AppError of a handler's failure: its own AppError, 503 retry_later for work dropped at its deadline that the
 * handler did not translate (nothing done; counted where it was dropped); anything else is a 500.
 */
function handlerError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof DeadlinePassedError) return new AppError('retry_later', LATE_MESSAGE);
  return new AppError('internal_error', 'The service failed to handle the request.');
}

/**
 * Decodes a request, runs the handler (in the request's deadline: transport/deadline.ts) and encodes its reply or its
 * error. A request whose deadline passed before it got here is not handled (503 retry_later, nothing done). Never
 * throws.
 */
export async function runEndpoint(
  binding: EndpointBinding,
  data: Uint8Array,
  ctx: CallContext,
  logger: Logger,
  metrics?: Metrics,
): Promise<HandlerOutcome> {
  if (ctx.deadline !== undefined && ctx.deadline <= performance.now()) {
    metrics?.lateWorkDropped.inc({ stage: 'received' });
    const late = new AppError('retry_later', LATE_MESSAGE);
    return { ok: false, status: late.status, code: late.code, data: encodeError(late) };
  }
  let request: MessageShape<DescMessage>;
  try {
    request = fromBinary(binding.operation.request, data);
  } catch (error) {
    // Bytes that are not the operation's request message: the caller's fault (400), not the service's.
    logger.warn(
      { err: error, subject: binding.operation.subject, requestId: ctx.requestId, bytes: data.length },
      'malformed request message',
    );
    const appError = new AppError(
      'INVALID_REQUEST',
      `The request is not a valid ${binding.operation.request.typeName} message.`,
    );
    return { ok: false, status: appError.status, code: appError.code, data: encodeError(appError) };
  }
  try {
    const reply = await withDeadline(ctx.deadline, () => binding.handle(request, ctx));
    const data = binding.encodeReply
      ? binding.encodeReply(reply)
      : toBinary(binding.operation.reply, create(binding.operation.reply, reply));
    return { ok: true, data };
  } catch (error) {
    const appError = handlerError(error);
    // A 503 is an outage the handler logged already (as a warning); anything else of the 5xx class is a bug.
    if (appError.code === 'internal_error' || (appError.status >= 500 && appError.status !== 503)) {
      logger.error({ err: error, subject: binding.operation.subject, requestId: ctx.requestId }, 'operation failed');
    }
    return { ok: false, status: appError.status, code: appError.code, data: encodeError(appError) };
  }
}

/**
 * Encodes a notice for `publish` (an EncodedNotice is its bytes already); undefined (logged and counted as failed)
 * when the message cannot be encoded, since publishing never throws into the code that committed what the notice
 * tells.
 */
export function encodeNotice<M extends DescMessage>(
  topic: Topic<M>,
  message: MessageInitShape<M> | EncodedNotice<M>,
  logger: Logger,
  metrics: Metrics,
): Uint8Array | undefined {
  if (message instanceof EncodedNotice) return message.bytes;
  try {
    return toBinary(topic.message, create(topic.message, message));
  } catch (error) {
    logger.error({ err: error, topic: topic.name }, 'notice not published: it does not encode');
    metrics.transportPublishes.inc({ topic: topic.name, outcome: 'failed' });
    return undefined;
  }
}

/** The receiving side of a subscription: decodes each notice and runs the handler; never throws. */
export function noticeReceiver<M extends DescMessage>(
  topic: Topic<M>,
  subject: string,
  handler: (message: MessageShape<M>) => void,
  logger: Logger,
): (data: Uint8Array) => void {
  return (data) => {
    let message: MessageShape<M>;
    try {
      message = fromBinary(topic.message, data);
    } catch (error) {
      logger.warn({ err: error, subject, bytes: data.length }, 'malformed notice ignored');
      return;
    }
    try {
      handler(message);
    } catch (error) {
      logger.error({ err: error, subject }, 'notice handler failed');
    }
  };
}

/** Counts in-flight handler runs so that a stop can wait for them. */
export class InFlight {
  private readonly running = new Set<Promise<unknown>>();

  track<T>(promise: Promise<T>): Promise<T> {
    this.running.add(promise);
    promise.finally(() => this.running.delete(promise)).catch(() => undefined);
    return promise;
  }

  async settle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  get size(): number {
    return this.running.size;
  }
}

/**
 * The services a transport serves, and how each stops (both transports alike): taken off the transport first, so that
 * no new request reaches it, then its handlers in flight awaited. close() stops them all.
 */
export class ServedServices {
  private readonly served = new Set<ServedService>();

  /** A service now served, whose handlers `inFlight` tracks; `unserve` takes it off the transport. */
  add(inFlight: InFlight, unserve: () => Promise<void> | void): ServedService {
    const served: ServedService = {
      stop: async () => {
        await unserve();
        await inFlight.settle();
        this.served.delete(served);
      },
    };
    this.served.add(served);
    return served;
  }

  async stopAll(): Promise<void> {
    for (const served of [...this.served]) await served.stop();
  }
}
