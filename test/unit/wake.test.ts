/**
 * The connections that wake a stopping embedded server's accept thread
 * (`src/embedded/wake.ts`): they arrive and are closed by the client side, stop when
 * told to, and a port nobody listens on only refuses them.
 */
import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { keepWakingAcceptLoop } from '../../src/embedded/wake.ts';

describe('keepWakingAcceptLoop', () => {
  it('connects at once and every 100 ms, each connection closed by the client, until stopped', async () => {
    const sockets: Socket[] = [];
    let closedByClient = 0;
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.on('end', () => (closedByClient += 1));
      socket.on('error', () => {});
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const port = (server.address() as { port: number }).port;
    const begin = performance.now();
    const stop = keepWakingAcceptLoop(port);
    while (sockets.length < 3 && performance.now() - begin < 5_000) await new Promise((done) => setTimeout(done, 10));
    const elapsed = performance.now() - begin;
    stop();
    // One at once, then at most one per 100 ms.
    expect(sockets.length).toBeGreaterThanOrEqual(3);
    expect(sockets.length).toBeLessThanOrEqual(Math.floor(elapsed / 100) + 1);
    await new Promise((done) => setTimeout(done, 300));
    const arrived = sockets.length;
    await new Promise((done) => setTimeout(done, 400));
    expect(sockets.length).toBe(arrived);
    expect(closedByClient).toBe(arrived);
    await new Promise<void>((closed) => server.close(() => closed()));
  });

  it('ignores a refused connection', async () => {
    const server = createServer();
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((closed) => server.close(() => closed()));
    const stop = keepWakingAcceptLoop(port);
    await new Promise((done) => setTimeout(done, 250));
    stop();
  });
});
