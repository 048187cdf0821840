// A customer's website for browser tests: serves whatever HTML the test sets
// for a path, on its own port (its origin is http://<name>.test:<port>).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export class VisitorSite {
  private constructor(private readonly server: http.Server, private readonly pages: Map<string, string>) {}

  static async start(): Promise<VisitorSite> {
    const pages = new Map<string, string>();
    const server = http.createServer((req, res) => {
      const html = pages.get(new URL(req.url ?? '/', 'http://site').pathname);
      if (html === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    });
    const site = new VisitorSite(server, pages);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return site;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  page(pathname: string, html: string): void {
    this.pages.set(pathname, html);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
