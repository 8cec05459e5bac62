/**
 * The metrics listener (`metricsAddress`): `GET /metrics` without a token, on
 * an address of its own that only the scraper's network reaches (loopback,
 * or a private interface), as Nomad and Consul serve their telemetry.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SvcError } from '../../model/errors.js';
import { baseUrl, drainServer, listen } from '../../traffic/gateway/http-server.js';
import { respondError, type ErrorReporter } from '../../traffic/gateway/respond-error.js';
import { METRICS_PATH } from './metrics-route.js';
import type { PlatformMetrics } from '../../infra/metrics/platform-metrics.js';

export interface MetricsListener {
  /** `http://host:port`, once listening. */
  readonly url: string;
  close(): Promise<void>;
}

/** Listens on `address` (`ip:port`; port 0 picks a free one). */
export async function startMetricsListener(address: string, metrics: PlatformMetrics, report: ErrorReporter): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const fail = (error: unknown) => respondError(res, error, undefined, report);
    const path = (req.url ?? '/').split('?')[0];
    if (path !== METRICS_PATH) {
      fail(new SvcError('not_found', `the metrics listener serves ${METRICS_PATH} only, not ${path}.`));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      fail(
        new SvcError('method_not_allowed', `${METRICS_PATH} does not take ${req.method}; it takes GET, HEAD.`, {
          headers: { Allow: 'GET, HEAD' },
        }),
      );
      return;
    }
    metrics.scrape().then(({ contentType, body }) => {
      res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
    }, fail);
  });
  const separator = address.lastIndexOf(':');
  const host = address.slice(0, separator).replace(/^\[|\]$/g, '');
  await listen(server, Number(address.slice(separator + 1)), host, 'metricsAddress (SVC_METRICS_ADDRESS)');
  return {
    url: baseUrl(server.address() as AddressInfo),
    close: () => drainServer(server, 1_000),
  };
}
