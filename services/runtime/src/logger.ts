// Structured JSON logs (pino). Every line names the program; request-scoped lines also carry the request id.
import { type Logger, pino } from 'pino';

export type { Logger };

/** `destination`: standard output by default (tests capture the lines elsewhere). */
export function createLogger(program: string, level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { program },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Credentials never reach the logs, whatever a caller sends.
    redact: {
      paths: ['req.headers.authorization', 'authorization', '*.authorization', 'linkToken', '*.linkToken', 'token'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
