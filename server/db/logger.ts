/**
 * The logger every layer is handed (the store, sync, the core): structured fields, never credentials or
 * request bodies. Declared here, at the bottom of the server, so each layer takes one by injection;
 * server/log.ts makes the JSON one.
 */
export type Fields = Record<string, unknown>;

export type Logger = {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  child(fields: Fields): Logger;
};
