import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { Hocuspocus } from '@hocuspocus/server';
import type { Logger } from '../server/db/logger.ts';

export const SYNC_PATH = '/sync';

/**
 * WebSocket on the same HTTP server as everything else, at SYNC_PATH and only on the hosts we serve;
 * every other upgrade is refused with a 404. Returns the socket server, to end its clients on close.
 */
export function handleUpgrades(server: Server, hocuspocus: Hocuspocus, hosts: () => Set<string>, log: Logger): WebSocketServer {
  // A pad is at most 60,000 characters (each change is checked against that before it applies); no
  // single sync message needs more than this.
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const host = (request.headers.host ?? '').toLowerCase();
    if (url.pathname !== SYNC_PATH || !hosts().has(host)) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      const headers = new Headers();
      for (const [key, value] of Object.entries(request.headers)) if (typeof value === 'string') headers.set(key, value);
      const client = hocuspocus.handleConnection(ws as never, new Request(`http://${host}${request.url}`, { headers }));
      ws.on('message', (data: Buffer) => client.handleMessage(new Uint8Array(data)));
      ws.on('close', (code: number, reason: Buffer) => client.handleClose({ code, reason: reason.toString() } as never));
      ws.on('error', (error) => log.warn('websocket error', { message: error.message }));
    });
  });
  return wss;
}
