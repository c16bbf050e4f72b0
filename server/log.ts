
import type { Fields, Logger } from './db/logger.ts';

/** Structured JSON logs, one line per event. Callers pass fields, never credentials or request bodies. */
const levels = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof levels;

export function createLogger(level: LogLevel, base: Fields = {}, write: (line: string) => void = (line) => void process.stdout.write(line + '\n')): Logger {
  const threshold = levels[level];
  const emit = (at: Exclude<LogLevel, 'silent'>, msg: string, fields?: Fields) => {
    if (levels[at] < threshold) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: at, msg, ...base, ...fields }, errorReplacer));
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}

function errorReplacer(_key: string, value: unknown) {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (typeof value === 'bigint') return Number(value);
  return value;
}
