/**
 * An app served over a real socket on the loopback interface, for clients that need a URL.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server listening on 127.0.0.1. */
export interface Loopback {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  url: string;
  /** Drops every open connection and stops listening; resolves once the server has closed. */
  close(): Promise<void>;
}

/**
 * Serves `app` (a Node request handler, such as `TestApp.app`) on 127.0.0.1 at a port
 * the system picks. `onRequest`, when given, sees each request before `app` does (its
 * headers; the body is left for `app`).
 * @throws (rejects with) the server's error when it cannot listen.
 */
export async function serveOnLoopback(
  app: (request: IncomingMessage, response: ServerResponse) => unknown,
  onRequest?: (request: IncomingMessage) => void,
): Promise<Loopback> {
  const server = createServer((request, response) => {
    onRequest?.(request);
    void app(request, response);
  });
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', failed);
      listening();
    });
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
    },
  };
}
