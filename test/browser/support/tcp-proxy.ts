// A TCP proxy in front of the node for browser tests: Chromium reaches the
// widget host through it, so a test can drop every open connection at once
// (a network failure, as the browser sees it). It listens before the node
// starts, so its port can go into AGENTRT_WIDGET_BASE_URL.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export class TcpProxy {
  target: number | null = null;
  private readonly sockets = new Set<net.Socket>();
  private constructor(private readonly server: net.Server) {}

  static async start(): Promise<TcpProxy> {
    let proxy: TcpProxy | null = null;
    const server = net.createServer((client) => proxy!.pipe(client));
    proxy = new TcpProxy(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Drops every connection open now; new ones are proxied as before. */
  cut(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: net.Socket): void {
    if (this.target === null) return void client.destroy();
    const upstream = net.connect(this.target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  }
}
