import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP server on 127.0.0.1 that accepts every connection and never writes or closes (until stopped): a private
 * endpoint seen from outside its VPC, or a security group that drops the answers.
 */
export async function startSilentServer(): Promise<{ port: number; stop: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
