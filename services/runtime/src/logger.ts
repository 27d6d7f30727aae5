// Structured JSON logs (pino). Every line names the program (or, for the all-in-one's shared parts, the process); request-scoped lines also carry the request id.
import { type Logger, pino } from 'pino';

export type { Logger };

/**
 * `name`: the program writing (`{ program }`), or the bindings of a process that hosts several programs (the
 * all-in-one logs `{ process: 'all-in-one' }` and each of its programs adds its own `program` to its lines: one key
 * per meaning). `destination`: standard output by default (tests capture the lines elsewhere).
 */
export function createLogger(
  name: string | { process: string },
  level: string,
  destination?: pino.DestinationStream,
): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: typeof name === 'string' ? { program: name } : { ...name },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Credentials never reach the logs, whatever a caller sends.
    redact: {
      paths: ['req.headers.authorization', 'authorization', '*.authorization', 'linkToken', '*.linkToken', 'token'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
