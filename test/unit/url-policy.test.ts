import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { guardedFetch } from '../../src/network/guarded-fetch';
import { assertAddressAllowed, checkOutboundUrl, guardedLookup, isMetadataEndpoint, isPrivateAddress } from '../../src/network/url-policy';

describe('url-policy', () => {
  describe('isPrivateAddress', () => {
    it('flags private, loopback, link-local, CGNAT, multicast and mapped addresses', () => {
      for (const address of ['10.1.2.3', '127.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1',
        '::1', '::', 'fe80::1', 'fd00::1', '[::1]', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::10.0.0.1']) {
        assert.equal(isPrivateAddress(address), true, address);
      }
    });

    it('flags private IPv4 hosts in every IPv6 form that embeds them, and reserved IPv6 ranges', () => {
      for (const address of [
        '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '0:0:0:0:0:ffff:7f00:1', '::7f00:1', '::127.0.0.1', '::ffff:0:7f00:1', '::ffff:0:a9fe:a9fe',
        '2002:7f00:1::', '2002:a9fe:a9fe::1', '64:ff9b:1::1', '2001::1', '2001:db8::1', '100::1', '[64:ff9b::7f00:1]',
      ]) {
        assert.equal(isPrivateAddress(address), true, address);
      }
      for (const address of ['64:ff9b::808:808', '::ffff:8.8.8.8', '2002:808:808::1', '2606:4700::1111']) assert.equal(isPrivateAddress(address), false, address);
    });

    it('flags the documentation ranges, which never host a real target', () => {
      for (const address of ['192.0.2.1', '198.51.100.7', '203.0.113.9']) assert.equal(isPrivateAddress(address), true, address);
    });

    it('passes public addresses and names', () => {
      for (const address of ['8.8.8.8', '172.32.0.1', '2001:4860:4860::8888', 'example.com']) assert.equal(isPrivateAddress(address), false, address);
    });
  });

  describe('checkOutboundUrl', () => {
    const strict = { allowPrivateNetwork: false };
    it('accepts a public https URL', () => {
      assert.equal(checkOutboundUrl('url', 'https://api.example.com/x?y=1', strict).hostname, 'api.example.com');
    });

    it('refuses a non-http scheme, a relative URL and credentials', () => {
      assert.throws(() => checkOutboundUrl('url', 'file:///etc/passwd', strict), { code: 'INVALID_ARGUMENT', message: 'url: must be an absolute http or https URL' });
      assert.throws(() => checkOutboundUrl('url', '/relative', strict), { message: 'url: must be an absolute http or https URL' });
      assert.throws(() => checkOutboundUrl('url', 'https://user:pw@example.com/', strict), { message: 'url: must not carry credentials; use headers with {{secrets.NAME}}' });
    });

    it('refuses literal private addresses and localhost unless allowed', () => {
      assert.throws(() => checkOutboundUrl('url', 'http://127.0.0.1:8080/', strict), { message: 'url: 127.0.0.1 is a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses' });
      assert.throws(() => checkOutboundUrl('url', 'http://[::1]/', strict), { message: 'url: [::1] is a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses' });
      assert.throws(() => checkOutboundUrl('url', 'http://api.localhost/', strict), { message: 'url: api.localhost is a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses' });
      assert.equal(checkOutboundUrl('url', 'http://127.0.0.1:8080/', { allowPrivateNetwork: true }).port, '8080');
    });

    it('refuses cloud metadata endpoints even when private networks are allowed', () => {
      const open = { allowPrivateNetwork: true };
      for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:169.254.169.254]/', 'http://metadata.google.internal/', 'http://[fd00:ec2::254]/', 'http://169.254.170.2/v2/credentials']) {
        assert.throws(() => checkOutboundUrl('url', url, open), /cloud metadata endpoint, which is never allowed/, url);
      }
      assert.throws(() => assertAddressAllowed('innocent.example.com', '169.254.169.254', open), { code: 'PERMISSION_DENIED' });
      assert.equal(isMetadataEndpoint('169.254.1.1'), false);
    });
  });

  describe('guardedLookup', () => {
    it('refuses a name that resolves to a loopback address', async () => {
      const lookup = guardedLookup({ allowPrivateNetwork: false });
      const error = await new Promise<Error | null>((resolve) => lookup('localhost', {}, (failure) => resolve(failure)));
      assert.equal(error?.name, 'PermissionDeniedError');
      assert.match(error!.message, /^refused to connect to localhost \((127\.0\.0\.1|::1)\), a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses$/);
    });

    it('resolves it when the private network is allowed', async () => {
      const lookup = guardedLookup({ allowPrivateNetwork: true });
      const address = await new Promise<string>((resolve, reject) => lookup('localhost', {}, (failure, result) => (failure ? reject(failure) : resolve(result as string))));
      assert.match(address, /^(127\.0\.0\.1|::1)$/);
    });
  });

  describe('guardedFetch', () => {
    let server: http.Server;
    let port: number;
    before(async () => {
      server = http.createServer((_request, response) => response.end('ok'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('refuses a literal loopback target', async () => {
      await assert.rejects(guardedFetch({ allowPrivateNetwork: false })(`http://127.0.0.1:${port}/`), { name: 'PermissionDeniedError', code: 'PERMISSION_DENIED' });
    });

    it('refuses a name resolving to loopback at connect time', async () => {
      await assert.rejects(guardedFetch({ allowPrivateNetwork: false })(`http://localhost:${port}/`), (error: Error) => {
        assert.equal(error.name, 'PermissionDeniedError');
        return true;
      });
    });

    it('fetches when the private network is allowed', async () => {
      const response = await guardedFetch({ allowPrivateNetwork: true })(`http://localhost:${port}/`);
      assert.equal(await response.text(), 'ok');
    });

    it('closes its keep-alive pool on close: later calls are refused', async () => {
      const fetch = guardedFetch({ allowPrivateNetwork: true });
      assert.equal(await (await fetch(`http://localhost:${port}/`)).text(), 'ok');
      await fetch.close();
      await assert.rejects(fetch(`http://localhost:${port}/`));
    });

    it('refuses a redirect from a public address to a literal loopback address', async () => {
      let reached = false;
      const inner = http.createServer((_request, response) => {
        reached = true;
        response.end('internal');
      });
      await new Promise<void>((resolve) => inner.listen(0, '127.0.0.1', resolve));
      const innerPort = (inner.address() as AddressInfo).port;
      const redirector = http.createServer((_request, response) => response.writeHead(302, { location: `http://127.0.0.1:${innerPort}/secret` }).end());
      await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
      const redirectorPort = (redirector.address() as AddressInfo).port;
      // Stand-in for the internet: sockets to the public address 93.184.216.34 reach the local redirector.
      const connect = net.connect;
      (net as { connect: unknown }).connect = (options: net.NetConnectOpts, ...rest: unknown[]) =>
        (connect as (...args: unknown[]) => net.Socket)((options as net.TcpNetConnectOpts).host === '93.184.216.34' ? { ...options, host: '127.0.0.1', port: redirectorPort } : options, ...rest);
      try {
        await assert.rejects(guardedFetch({ allowPrivateNetwork: false })('http://93.184.216.34/'), (error: Error) => {
          assert.equal(error.name, 'PermissionDeniedError');
          assert.match(error.message, /^refused to connect to 127\.0\.0\.1 \(127\.0\.0\.1\)/);
          return true;
        });
        assert.equal(reached, false);
        const manual = await guardedFetch({ allowPrivateNetwork: false })('http://93.184.216.34/', { redirect: 'manual' });
        assert.equal(manual.status, 302, 'the stand-in reaches the redirector');
      } finally {
        (net as { connect: unknown }).connect = connect;
        inner.close();
        redirector.close();
      }
    });

    it('leaves assertAddressAllowed silent for public addresses', () => {
      assert.doesNotThrow(() => assertAddressAllowed('example.com', '93.184.216.34', { allowPrivateNetwork: false }));
    });
  });
});
