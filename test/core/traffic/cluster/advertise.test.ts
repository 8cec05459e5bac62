import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo } from 'node:os';
import { defaultAdvertiseUrl } from '../../../../core/traffic/cluster/advertise.js';

const nic = (address: string, family: 'IPv4' | 'IPv6', internal: boolean) =>
  ({ address, family, internal, netmask: '', mac: '', cidr: null }) as NetworkInterfaceInfo;
const interfaces = { lo: [nic('127.0.0.1', 'IPv4', true)], eth0: [nic('fe80::1', 'IPv6', false), nic('10.0.3.7', 'IPv4', false)] };

describe('defaultAdvertiseUrl()', () => {
  it('is the address svc listens on when it names one', () => {
    assert.equal(defaultAdvertiseUrl({ address: '10.0.3.9', family: 'IPv4', port: 7420 }, interfaces), 'http://10.0.3.9:7420');
    assert.equal(defaultAdvertiseUrl({ address: '::1', family: 'IPv6', port: 7420 }, interfaces), 'http://[::1]:7420');
  });

  it("is this machine's first non-loopback IPv4 address on a wildcard, not 127.0.0.1 (which names another machine elsewhere)", () => {
    assert.equal(defaultAdvertiseUrl({ address: '0.0.0.0', family: 'IPv4', port: 24312 }, interfaces), 'http://10.0.3.7:24312');
    assert.equal(defaultAdvertiseUrl({ address: '::', family: 'IPv6', port: 24312 }, interfaces), 'http://10.0.3.7:24312');
    assert.equal(
      defaultAdvertiseUrl({ address: '0.0.0.0', family: 'IPv4', port: 1 }, { lo: interfaces.lo }),
      'http://127.0.0.1:1',
      'loopback when there is nothing else',
    );
  });
});
