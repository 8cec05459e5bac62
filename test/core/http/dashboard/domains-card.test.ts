import assert from 'node:assert/strict';
import { domainsCard } from '../../../../core/http/dashboard/domains-card.js';
import type { DomainView } from '../../../../core/model/domains/types.js';

const view = (status: DomainView['status'], domain: string): DomainView => ({
  domain,
  workspace: 'acme',
  app: 'shop',
  workload: 'web',
  status,
  record: { type: 'TXT', name: `_svc-challenge.${domain}`, value: 'svc-0123' },
  claimedAt: '2026-01-01T00:00:00.000Z',
  verifiedAt: status === 'pending' ? null : '2026-01-02T00:00:00.000Z',
  reason: status === 'suspended' ? "the workspace's plan does not include custom domains" : null,
});

describe('domainsCard()', () => {
  it('shows each domain with its status, its workload, and the record to publish while pending', () => {
    const text = String(
      domainsCard([view('pending', 'a.example.test'), view('verified', 'b.example.test'), view('suspended', 'c.example.test')], 'team'),
    );
    assert.match(
      text,
      /<code>a\.example\.test<\/code><\/td><td>pending<\/td><td>shop\/web<\/td><td><code>_svc-challenge\.a\.example\.test<\/code> TXT <code>svc-0123<\/code>/,
    );
    assert.match(text, /<code>b\.example\.test<\/code><\/td><td>verified<\/td><td>shop\/web<\/td><td><\/td>/);
    assert.match(text, /suspended<br><span class="help">the workspace&#39;s plan does not include custom domains<\/span>/);
  });

  it('says how to get one when there are none, naming the plan', () => {
    assert.match(
      String(domainsCard([], 'free')),
      /No custom domains\. A deploy with <code>domain="api\.example\.com"<\/code>.*this workspace is on free/,
    );
  });
});
