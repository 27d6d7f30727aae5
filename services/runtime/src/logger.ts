// Structured JSON logs (pino). Every line names the program; request-scoped lines also carry the request id.
import { type Logger, pino } from 'pino';

export type { Logger };

export function createLogger(program: string, level: string): Logger {
  return pino({
    level,
    base: { program },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Credentials never reach the logs, whatever a caller sends.
    redact: {
      paths: ['req.headers.authorization', 'authorization', '*.authorization', 'linkToken', '*.linkToken', 'token'],
      censor: '[redacted]',
    },
  });
}
