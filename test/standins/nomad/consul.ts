/**
 * What a Nomad client sends its local Consul agent for `Provider: "consul"` services
 * (hashicorp/nomad command/agent/consul/service_client.go `serviceRegs`, `createCheckReg`,
 * client/serviceregistration/id.go): `PUT /v1/agent/service/register` with ID
 * `_nomad-task-<allocID>-<task name | group-<group>>-<service>-<port label>`, Address/Port of the
 * port label (address mode auto = host IP and host port), Tags, Meta + `external-source: nomad`,
 * and Checks with IDs `_nomad-check-<sha256>`; `PUT /v1/agent/service/deregister/<id>` on stop.
 */
import { createHash } from 'node:crypto';
import type { AllocatedPort } from './env.js';
import { goDuration, type Json } from './job.js';

export function serviceId(allocId: string, workloadName: string, service: Json): string {
  return `_nomad-task-${allocId}-${workloadName}-${service.Name}-${service.PortLabel ?? ''}`;
}

/** structs.ServiceCheck.Hash(serviceID), hex sha256, the same field order and quirks. */
export function checkId(serviceID: string, check: Json): string {
  const h = createHash('sha256');
  const s = (value: unknown) => h.update(String(value ?? ''));
  s(serviceID);
  s(check.Name);
  s(check.Type);
  s(check.Command);
  s((check.Args ?? []).join(''));
  s(check.Path);
  s(check.Protocol);
  s(check.PortLabel);
  s(goDuration(check.Interval ?? 0));
  s(goDuration(check.Timeout ?? 0));
  s(check.Method);
  s(check.Body);
  s(check.OnUpdate);
  s(check.Notes);
  if (check.TLSSkipVerify) s('true');
  if (check.TLSServerName) s(check.TLSServerName);
  const header = (check.Header ?? {}) as Record<string, string[]>;
  const headers = Object.entries(header)
    .map(([k, v]) => k + v.join(''))
    .sort();
  if (headers.length > 0) s(headers.join(''));
  if (check.AddressMode) s(check.AddressMode);
  if (check.GRPCService) s(check.GRPCService);
  if (check.GRPCUseTLS) s('true');
  if (check.SuccessBeforePassing) s(`success:${check.SuccessBeforePassing}`);
  if (check.FailuresBeforeCritical) s(`failures:${check.FailuresBeforeCritical}`);
  if (check.FailuresBeforeWarning) s(`failures-before-warning:${check.FailuresBeforeWarning}`);
  return `_nomad-check-${h.digest('hex')}`;
}

/** The AgentServiceRegistration body (Go api structs with `omitempty`: empty fields are left out). */
export function registration(id: string, service: Json, ports: readonly AllocatedPort[], render: (text: string) => string): Json {
  const port = ports.find((p) => p.Label === service.PortLabel);
  const address = service.Address ? render(service.Address) : (port?.HostIP ?? '');
  const portNumber = port?.Value ?? (/^\d+$/.test(service.PortLabel ?? '') ? Number(service.PortLabel) : 0);
  const meta: Record<string, string> = {};
  for (const [k, v] of Object.entries(service.Meta ?? {})) meta[k] = render(String(v));
  meta['external-source'] = 'nomad';
  const body: Json = { ID: id, Name: render(service.Name) };
  const tags = (service.Tags ?? []).map((t: string) => render(t));
  if (tags.length > 0) body.Tags = tags;
  if (portNumber) body.Port = portNumber;
  if (address) body.Address = address;
  body.Meta = meta;
  if (service.EnableTagOverride) body.EnableTagOverride = true;
  if (service.Weights) body.Weights = service.Weights;
  const checks: Json[] = [];
  for (const check of service.Checks ?? []) {
    const checkPort = check.PortLabel ? ports.find((p) => p.Label === check.PortLabel) : port;
    const host = checkPort?.HostIP ?? address;
    const hostPort = checkPort?.Value ?? portNumber;
    const hostJoined = host.includes(':') ? `[${host}]:${hostPort}` : `${host}:${hostPort}`;
    const reg: Json = { CheckID: checkId(id, check), Name: check.Name };
    if (check.Type === 'script') {
      reg.TTL = goDuration(check.Interval + 31 * 1_000_000_000);
    } else {
      reg.Interval = goDuration(check.Interval);
    }
    reg.Timeout = goDuration(check.Timeout);
    if (check.Type === 'http') {
      reg.HTTP = new URL(check.Path ?? '', `${check.Protocol || 'http'}://${hostJoined}`).toString();
      if (check.Method) reg.Method = check.Method;
      if (check.Header) reg.Header = check.Header;
      if (check.Body) reg.Body = check.Body;
      if (check.TLSServerName) reg.TLSServerName = check.TLSServerName;
    } else if (check.Type === 'tcp') {
      reg.TCP = hostJoined;
    } else if (check.Type === 'grpc') {
      reg.GRPC = `${hostJoined}/${check.GRPCService ?? ''}`;
      if (check.GRPCUseTLS) reg.GRPCUseTLS = true;
    }
    if (check.TLSSkipVerify) reg.TLSSkipVerify = true;
    if (check.InitialStatus) reg.Status = check.InitialStatus;
    if (check.SuccessBeforePassing) reg.SuccessBeforePassing = check.SuccessBeforePassing;
    if (check.FailuresBeforeCritical) reg.FailuresBeforeCritical = check.FailuresBeforeCritical;
    if (check.FailuresBeforeWarning) reg.FailuresBeforeWarning = check.FailuresBeforeWarning;
    checks.push(reg);
  }
  if (checks.length > 0) body.Checks = checks;
  return body;
}

export class ConsulAgentClient {
  readonly errors: string[] = [];

  constructor(
    private readonly url: string,
    private readonly token: string | undefined,
  ) {}

  async register(body: Json): Promise<boolean> {
    return this.put('/v1/agent/service/register', JSON.stringify(body));
  }

  async deregister(id: string): Promise<boolean> {
    return this.put(`/v1/agent/service/deregister/${encodeURIComponent(id)}`, undefined);
  }

  /** Status of each check ID on the agent (`GET /v1/agent/checks`); empty when Consul cannot be read. */
  async checkStatuses(): Promise<Record<string, string>> {
    try {
      const response = await fetch(new URL('/v1/agent/checks', this.url), { headers: this.headers() });
      if (!response.ok) return {};
      const checks = (await response.json()) as Record<string, { Status?: string }>;
      return Object.fromEntries(Object.entries(checks).map(([id, check]) => [id, check.Status ?? '']));
    } catch {
      return {};
    }
  }

  private headers(): Record<string, string> {
    return this.token ? { 'X-Consul-Token': this.token } : {};
  }

  private async put(path: string, body: string | undefined): Promise<boolean> {
    try {
      const response = await fetch(new URL(path, this.url), { method: 'PUT', body, headers: this.headers() });
      if (response.ok) {
        await response.arrayBuffer();
        return true;
      }
      this.errors.push(`PUT ${path}: ${response.status} ${await response.text()}`);
    } catch (error) {
      this.errors.push(`PUT ${path}: ${(error as Error).message}`);
    }
    return false;
  }
}
