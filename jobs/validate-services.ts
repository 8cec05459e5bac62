/**
 * Service and check rules (`structs.Service.Validate`, `ServiceCheck.validate`,
 * Task.validateServices in hashicorp/nomad nomad/structs): RFC 1123 names,
 * port labels that exist, check intervals and timeouts of at least 1s,
 * provider-specific check types, Consul-safe Meta.
 */
import { checkConsulMeta, list, num, obj, oneOf, SECOND_NS, str, type Obj, type Report } from './rules.js';

/** Nomad's service-name rule, checked after `${...}` is replaced by a placeholder. */
const SERVICE_NAME = /^([a-z0-9]|[a-z0-9][a-z0-9-]{0,61}[a-z0-9])$/i;

export function checkServices(report: Report, path: string, owner: Obj, labels: ReadonlySet<string>, atGroup: boolean): void {
  const seen = new Set<string>();
  list(owner.Services).forEach((service, index) => {
    const at = `${path}.Services[${index}]`;
    const name = str(service.Name);
    if (name === undefined || name === '')
      report(`${at}.Name`, 'is required (svc names every service; the default <job>-<group>-<task> can break the 63-character limit)');
    else if (!SERVICE_NAME.test(name.replace(/\$\{[^}]*\}/g, 'x'))) {
      report(`${at}.Name`, `"${name}" is not a valid service name: RFC 1123, 1 to 63 letters, digits and inner "-" (no dots or "_")`);
    }
    const port = str(service.PortLabel);
    const key = `${name ?? ''}\u0000${port ?? ''}`;
    if (seen.has(key)) report(`${at}.Name`, `service "${name}" is duplicate for port label "${port ?? ''}"`);
    seen.add(key);
    const mode = str(service.AddressMode) ?? 'auto';
    oneOf(report, `${at}.AddressMode`, service.AddressMode, ['auto', 'host', 'driver', 'alloc', 'alloc_ipv6']);
    if (!atGroup && (mode === 'alloc' || mode === 'alloc_ipv6')) report(`${at}.AddressMode`, `"${mode}" is only allowed on group services`);
    if (service.Address !== undefined && mode !== 'auto') report(`${at}.Address`, 'may only be set with AddressMode "auto"');
    if (port !== undefined && port !== '') checkPortLabel(report, `${at}.PortLabel`, port, labels, mode);
    const provider = str(service.Provider) ?? 'consul';
    oneOf(report, `${at}.Provider`, service.Provider, ['consul', 'nomad']);
    oneOf(report, `${at}.OnUpdate`, service.OnUpdate, ['require_healthy', 'ignore_warnings', 'ignore']);
    if (provider === 'consul') checkConsulMeta(report, `${at}.Meta`, service.Meta);
    checkChecks(report, at, service, labels, provider);
  });
}

function checkPortLabel(report: Report, path: string, port: string, labels: ReadonlySet<string>, mode: string): void {
  if (labels.has(port)) return;
  if (/^\d+$/.test(port) && mode === 'driver') return;
  report(
    path,
    `port label "${port}" does not exist in the group's Networks (it has ${labels.size === 0 ? 'none' : [...labels].map((l) => `"${l}"`).join(', ')})`,
  );
}

function checkChecks(report: Report, path: string, service: Obj, labels: ReadonlySet<string>, provider: string): void {
  const names = new Set<string>();
  list(service.Checks).forEach((check, index) => {
    const at = `${path}.Checks[${index}]`;
    const type = str(check.Type);
    if (type === undefined) report(`${at}.Type`, 'is required');
    else oneOf(report, `${at}.Type`, type, provider === 'nomad' ? ['http', 'tcp'] : ['http', 'tcp', 'grpc', 'script']);
    if (type === 'http') {
      const checkPath = str(check.Path);
      if (checkPath === undefined || checkPath === '') report(`${at}.Path`, 'is required for an http check');
      else if (/^[a-z][a-z0-9+.-]*:/i.test(checkPath) || checkPath.startsWith('//'))
        report(`${at}.Path`, `must be a relative path like "/_svc/health", not ${JSON.stringify(checkPath)}`);
    }
    oneOf(report, `${at}.Protocol`, check.Protocol, ['', 'http', 'https']);
    for (const field of ['Interval', 'Timeout'] as const) {
      const value = num(check[field]);
      if (check[field] === undefined) report(`${at}.${field}`, 'is required');
      else if (value !== undefined && value < SECOND_NS) report(`${at}.${field}`, `must be at least 1s (${SECOND_NS} ns), not ${value} ns`);
    }
    oneOf(report, `${at}.InitialStatus`, check.InitialStatus, ['', 'passing', 'warning', 'critical']);
    oneOf(report, `${at}.AddressMode`, check.AddressMode, ['', 'host', 'driver', 'alloc', 'alloc_ipv6']);
    oneOf(report, `${at}.OnUpdate`, check.OnUpdate, ['', 'require_healthy', 'ignore_warnings', 'ignore']);
    const name = str(check.Name);
    if (name !== undefined) {
      if (names.has(name)) report(`${at}.Name`, `check name "${name}" is used twice in this service`);
      names.add(name);
    }
    const notes = str(check.Notes);
    if (notes !== undefined && notes.length > 255) report(`${at}.Notes`, 'must be at most 255 characters');
    const port = str(check.PortLabel);
    if (port !== undefined && port !== '') checkPortLabel(report, `${at}.PortLabel`, port, labels, str(check.AddressMode) ?? 'host');
    if (provider === 'nomad') {
      for (const field of ['SuccessBeforePassing', 'FailuresBeforeCritical', 'FailuresBeforeWarning', 'TLSServerName'] as const) {
        if (check[field] !== undefined) report(`${at}.${field}`, 'is not supported by the nomad service provider');
      }
    }
    const warning = num(check.FailuresBeforeWarning);
    const critical = num(check.FailuresBeforeCritical);
    if (warning !== undefined && critical !== undefined && warning > critical)
      report(`${at}.FailuresBeforeWarning`, 'must not exceed FailuresBeforeCritical');
    const restart = obj(check.CheckRestart);
    const limit = num(restart?.Limit);
    if (limit !== undefined && limit < 0) report(`${at}.CheckRestart.Limit`, 'must be 0 or more');
  });
}
