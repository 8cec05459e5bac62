/**
 * `/v1/agent/*` of the Consul stand-in, after agent/agent_endpoint.go,
 * agent/structs/{service_definition,check_type,structs}.go and
 * agent/checks/check.go: strict service registration (unknown key → 400),
 * Meta rules, check rules, default check IDs `service:<id>[:n]` starting
 * `critical`, HTTP checks that really run at their interval (at least 1s,
 * first run staggered within it; 2xx passing, 429 warning, anything else
 * critical; default timeout 10s), TTL checks with pass/warn/fail/update.
 * Only status changes raise indexes: the real agent syncs output-only
 * changes lazily.
 */
import {
  durationField,
  formatGoDuration,
  intField,
  jsonType,
  parseGoBool,
  strictFields,
  stringField,
  stringList,
  stringMap,
} from './go.js';
import { HttpError, NOT_AN_ENDPOINT, sendJson, sendText, type Call } from './http.js';
import { NODE_NAME, type Check, type CheckStatus, type ConsulState, type Service } from './state.js';

const MIN_INTERVAL_MS = 1000;
const DEFAULT_HTTP_TIMEOUT_MS = 10_000;
const OUTPUT_MAX = 4096;

const SERVICE_FIELDS = [
  'Kind',
  'ID',
  'Name',
  'Tags',
  'Address',
  'TaggedAddresses',
  'Meta',
  'Port',
  'SocketPath',
  'Check',
  'Checks',
  'Weights',
  'Token',
  'EnableTagOverride',
  'Proxy',
  'Connect',
  'Locality',
  'Namespace',
  'Partition',
];
const CHECK_FIELDS = [
  'CheckID',
  'Name',
  'Status',
  'Notes',
  'ScriptArgs',
  'HTTP',
  'H2PING',
  'H2PingUseTLS',
  'Header',
  'Method',
  'Body',
  'DisableRedirects',
  'TCP',
  'TCPUseTLS',
  'UDP',
  'Interval',
  'AliasNode',
  'AliasService',
  'DockerContainerID',
  'Shell',
  'GRPC',
  'GRPCUseTLS',
  'OSService',
  'TLSServerName',
  'TLSSkipVerify',
  'Timeout',
  'TTL',
  'SuccessBeforePassing',
  'FailuresBeforeWarning',
  'FailuresBeforeCritical',
  'ProxyHTTP',
  'ProxyGRPC',
  'DeregisterCriticalServiceAfter',
  'OutputMaxSize',
  'ServiceID',
];
const CHECK_ALIASES = {
  args: 'ScriptArgs',
  script_args: 'ScriptArgs',
  deregister_critical_service_after: 'DeregisterCriticalServiceAfter',
  docker_container_id: 'DockerContainerID',
  tls_server_name: 'TLSServerName',
  tls_skip_verify: 'TLSSkipVerify',
  grpc_use_tls: 'GRPCUseTLS',
  h2ping_use_tls: 'H2PingUseTLS',
  service_id: 'ServiceID',
};
const META_KEY = /^[a-zA-Z0-9_-]+$/;

interface CheckType {
  CheckID?: string;
  Name?: string;
  Status?: string;
  Notes?: string;
  HTTP?: string;
  Method?: string;
  Header?: Record<string, string[]>;
  Body?: string;
  TCP?: string;
  UDP?: string;
  GRPC?: string;
  H2PING?: string;
  OSService?: string;
  ScriptArgs?: string[];
  AliasNode?: string;
  AliasService?: string;
  IntervalMs: number;
  TimeoutMs: number;
  TtlMs: number;
  OutputMaxSize: number;
}

interface Runner {
  stop(): void;
}

export class Agent {
  readonly #runners = new Map<string, Runner>();
  readonly #types = new Map<string, CheckType>();

  constructor(private readonly state: ConsulState) {}

  handle(call: Call): void {
    const parts = call.path.split('/').slice(3); // after /v1/agent/
    const [group, verb] = parts;
    const rest = parts.slice(2).join('/');
    if (group === 'service' && verb === 'register') return this.#register(call);
    if (group === 'service' && verb === 'deregister') return this.#deregister(call, rest);
    if (group === 'services' && parts.length === 1)
      return sendJson(call.res, Object.fromEntries([...this.state.services].map(([id, s]) => [id, agentService(s)])));
    if (group === 'checks' && parts.length === 1)
      return sendJson(
        call.res,
        Object.fromEntries([...this.state.checks].filter(([id]) => id !== 'serfHealth').map(([id, c]) => [id, agentCheck(c)])),
      );
    if (group === 'check' && verb !== undefined && ['pass', 'warn', 'fail', 'update'].includes(verb))
      return this.#ttlUpdate(call, verb, rest);
    throw new HttpError(404, NOT_AN_ENDPOINT);
  }

  /** Stops every check runner. */
  close(): void {
    for (const runner of this.#runners.values()) runner.stop();
    this.#runners.clear();
  }

  /** Test hook: sets a check's status as if its probe had answered so. */
  setCheckStatus(checkId: string, status: CheckStatus, output = ''): void {
    this.#setStatus(checkId, status, output);
  }

  #register(call: Call): void {
    if (call.method !== 'PUT') throw new HttpError(405, `method ${call.method} not allowed`);
    let definition: ReturnType<typeof decodeService>;
    try {
      definition = decodeService(call.body.length === 0 ? null : JSON.parse(call.body.toString('utf8')));
    } catch (error) {
      return sendText(call.res, 400, `Request decode failed: ${(error as Error).message}`);
    }
    const { service, checks } = definition;
    if (service.Service === '') return sendText(call.res, 400, 'Missing service name');
    if (service.ID === '') service.ID = service.Service;
    const metaProblem = validateMeta(service.Meta);
    if (metaProblem !== null) return sendText(call.res, 400, `Invalid Service Meta: ${metaProblem}`);
    for (const check of checks) {
      const problem = validateCheck(check);
      if (problem !== null) return sendText(call.res, 400, `Invalid check: ${problem}`);
      if (check.Status !== undefined && check.Status !== '' && !['passing', 'warning', 'critical'].includes(check.Status)) {
        return sendText(call.res, 400, "Status for checks must 'passing', 'warning', 'critical'");
      }
    }
    if (service.Address === '0.0.0.0' || service.Address === '::' || service.Address === '[::]')
      return sendText(call.res, 400, 'Invalid service address');
    let replaceChecks = false;
    if (call.query.has('replace-existing-checks')) {
      const raw = call.query.get('replace-existing-checks') ?? '';
      try {
        replaceChecks = raw === '' || parseGoBool(raw);
      } catch {
        return sendText(call.res, 400, 'Invalid value for ?replace-existing-checks');
      }
    }

    const index = this.state.apply();
    const previous = this.state.services.get(service.ID);
    this.state.services.set(service.ID, { ...service, CreateIndex: previous?.CreateIndex ?? index, ModifyIndex: index });
    const keep = new Set<string>();
    checks.forEach((check, i) => {
      const id = check.CheckID || (checks.length > 1 ? `service:${service.ID}:${i + 1}` : `service:${service.ID}`);
      keep.add(id);
      this.#addCheck(index, id, check, service);
    });
    for (const [id, check] of [...this.state.checks]) {
      if (check.ServiceID !== service.ID || keep.has(id)) continue;
      if (replaceChecks) this.#removeCheck(id);
      else check.ServiceTags = [...service.Tags];
    }
    this.state.touch('services', index);
    this.state.touch('checks', index);
    if (previous !== undefined && previous.Service !== service.Service) this.state.touchService(previous.Service, index);
    this.state.touchService(service.Service, index);
    this.state.changed();
    call.res.writeHead(200, { 'Content-Type': 'application/json' }).end(); // Consul sets the type, with no body
  }

  #addCheck(index: number, id: string, type: CheckType, service: Pick<Service, 'ID' | 'Service' | 'Tags'>): void {
    this.#runners.get(id)?.stop();
    const previous = this.state.checks.get(id);
    const kind = type.HTTP
      ? 'http'
      : type.TCP
        ? 'tcp'
        : type.UDP
          ? 'udp'
          : type.GRPC
            ? 'grpc'
            : type.H2PING
              ? 'h2ping'
              : type.ScriptArgs
                ? 'script'
                : type.AliasService || type.AliasNode
                  ? 'alias'
                  : type.OSService
                    ? 'os_service'
                    : 'ttl';
    const definition: Record<string, unknown> = {};
    if (type.HTTP)
      Object.assign(definition, { HTTP: type.HTTP, Method: type.Method ?? '', Header: type.Header ?? null, Body: type.Body ?? '' });
    if (type.TCP) definition.TCP = type.TCP;
    if (type.IntervalMs > 0) definition.Interval = formatGoDuration(type.IntervalMs);
    if (type.TimeoutMs > 0) definition.Timeout = formatGoDuration(type.TimeoutMs);
    if (type.TtlMs > 0) definition.TTL = formatGoDuration(type.TtlMs);
    const status = (type.Status || 'critical') as CheckStatus;
    this.state.checks.set(id, {
      CheckID: id,
      Name: type.Name || `Service '${service.Service}' check`,
      Status: status,
      Notes: type.Notes ?? '',
      Output: '',
      ServiceID: service.ID,
      ServiceName: service.Service,
      ServiceTags: [...service.Tags],
      Type: kind,
      Interval: type.IntervalMs > 0 ? formatGoDuration(type.IntervalMs) : '',
      Timeout: type.TimeoutMs > 0 ? formatGoDuration(type.TimeoutMs) : '',
      Definition: definition,
      CreateIndex: previous?.CreateIndex ?? index,
      ModifyIndex: index,
    });
    this.#types.set(id, type);
    if (kind === 'http') this.#runners.set(id, this.#runHttp(id, type));
    else if (kind === 'ttl') this.#runners.set(id, this.#runTtl(id, type.TtlMs));
  }

  #removeCheck(id: string): void {
    this.#runners.get(id)?.stop();
    this.#runners.delete(id);
    this.#types.delete(id);
    this.state.checks.delete(id);
  }

  #deregister(call: Call, id: string): void {
    if (call.method !== 'PUT') throw new HttpError(405, `method ${call.method} not allowed`);
    const service = this.state.services.get(id);
    if (service === undefined)
      return sendText(
        call.res,
        404,
        `Unknown service ID ${JSON.stringify(id)}. Ensure that the service ID is passed, not the service name.`,
      );
    const index = this.state.apply();
    this.state.services.delete(id);
    for (const [checkId, check] of [...this.state.checks]) if (check.ServiceID === id) this.#removeCheck(checkId);
    this.state.touch('services', index);
    this.state.touch('checks', index);
    this.state.touchService(service.Service, index);
    this.state.changed();
    call.res.writeHead(200, { 'Content-Type': 'application/json' }).end();
  }

  #setStatus(id: string, status: CheckStatus, output: string): void {
    const check = this.state.checks.get(id);
    if (check === undefined) return;
    check.Output = output.slice(0, this.#types.get(id)?.OutputMaxSize || OUTPUT_MAX);
    if (check.Status === status) return;
    const index = this.state.apply();
    check.Status = status;
    check.ModifyIndex = index;
    this.state.touch('checks', index);
    if (check.ServiceName !== '') this.state.touchService(check.ServiceName, index);
    this.state.changed();
  }

  #runHttp(id: string, type: CheckType): Runner {
    const interval = Math.max(type.IntervalMs, MIN_INTERVAL_MS);
    const timeout = type.TimeoutMs > 0 ? type.TimeoutMs : DEFAULT_HTTP_TIMEOUT_MS;
    let stopped = false;
    let timer: NodeJS.Timeout;
    const probe = async (): Promise<void> => {
      const method = type.Method || 'GET';
      const headers: Record<string, string> = { 'User-Agent': 'Consul Health Check', Accept: 'text/plain, text/*, */*' };
      for (const [name, values] of Object.entries(type.Header ?? {})) if (values[0] !== undefined) headers[name] = values.join(', ');
      try {
        const response = await fetch(type.HTTP!, {
          method,
          headers,
          body: type.Body || undefined,
          signal: AbortSignal.timeout(timeout),
          redirect: 'follow',
        });
        const text = (await response.text()).slice(0, OUTPUT_MAX);
        const output = `HTTP ${method} ${type.HTTP}: ${response.status} ${response.statusText} Output: ${text}`;
        const status: CheckStatus =
          response.status >= 200 && response.status <= 299 ? 'passing' : response.status === 429 ? 'warning' : 'critical';
        if (!stopped) this.#setStatus(id, status, output);
      } catch (error) {
        if (!stopped) this.#setStatus(id, 'critical', `Get "${type.HTTP}": ${(error as Error).message}`);
      }
    };
    const loop = (delay: number): void => {
      timer = setTimeout(() => {
        void probe().finally(() => {
          if (!stopped) loop(interval);
        });
      }, delay);
      timer.unref();
    };
    loop(Math.random() * interval);
    return {
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }

  #runTtl(id: string, ttlMs: number): Runner {
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => this.#setStatus(id, 'critical', 'TTL expired'), ttlMs);
      timer.unref();
    };
    arm();
    this.#ttlArm.set(id, arm);
    return {
      stop: () => {
        clearTimeout(timer);
        this.#ttlArm.delete(id);
      },
    };
  }

  readonly #ttlArm = new Map<string, () => void>();

  #ttlUpdate(call: Call, verb: string, id: string): void {
    if (call.method !== 'PUT') throw new HttpError(405, `method ${call.method} not allowed`);
    const check = this.state.checks.get(id);
    if (check === undefined)
      return sendText(call.res, 404, `Unknown check ID ${JSON.stringify(id)}. Ensure that the check ID is passed, not the check name.`);
    const arm = this.#ttlArm.get(id);
    if (arm === undefined) throw new HttpError(500, `CheckID ${JSON.stringify(id)} does not have associated TTL`);
    let status: CheckStatus;
    let output = call.query.get('note') ?? '';
    if (verb === 'update') {
      let body: Record<string, unknown>;
      try {
        body = strictFields(JSON.parse(call.body.toString('utf8') || 'null'), ['Status', 'Output'], {}, 'agent.checkUpdate');
      } catch (error) {
        return sendText(call.res, 400, `Request decode failed: ${(error as Error).message}`);
      }
      const wanted = body.Status;
      if (wanted !== 'passing' && wanted !== 'warning' && wanted !== 'critical')
        return sendText(call.res, 400, `Invalid check status: '${String(wanted)}'`);
      status = wanted;
      output = typeof body.Output === 'string' ? body.Output : '';
    } else {
      status = verb === 'pass' ? 'passing' : verb === 'warn' ? 'warning' : 'critical';
    }
    arm();
    this.#setStatus(id, status, output);
    call.res.writeHead(200).end();
  }
}

function decodeService(raw: unknown): { service: Omit<Service, 'CreateIndex' | 'ModifyIndex'>; checks: CheckType[] } {
  const f = strictFields(
    raw,
    SERVICE_FIELDS,
    { enable_tag_override: 'EnableTagOverride', tagged_addresses: 'TaggedAddresses' },
    'structs.ServiceDefinition',
  );
  if (f.Weights !== undefined && f.Weights !== null) strictFields(f.Weights, ['Passing', 'Warning'], {}, 'structs.Weights');
  const weights = (f.Weights ?? { Passing: 1, Warning: 1 }) as { Passing: number; Warning: number };
  if (f.EnableTagOverride !== undefined && typeof f.EnableTagOverride !== 'boolean') {
    throw new Error(
      `json: cannot unmarshal ${jsonType(f.EnableTagOverride)} into Go struct field ServiceDefinition.EnableTagOverride of type bool`,
    );
  }
  const checks: CheckType[] = [];
  if (f.Check !== undefined && f.Check !== null) {
    const check = decodeCheck(f.Check);
    if (!emptyCheck(check)) checks.push(check);
  }
  if (f.Checks !== undefined && f.Checks !== null) {
    if (!Array.isArray(f.Checks))
      throw new Error(
        `json: cannot unmarshal ${jsonType(f.Checks)} into Go struct field ServiceDefinition.Checks of type structs.CheckTypes`,
      );
    for (const check of f.Checks) checks.push(decodeCheck(check));
  }
  return {
    service: {
      ID: stringField(f.ID, 'ServiceDefinition.ID') ?? '',
      Service: stringField(f.Name, 'ServiceDefinition.Name') ?? '',
      Tags: stringList(f.Tags, 'ServiceDefinition.Tags') ?? [],
      Address: stringField(f.Address, 'ServiceDefinition.Address') ?? '',
      Meta: stringMap(f.Meta, 'ServiceDefinition.Meta') ?? {},
      Port: intField(f.Port, 'ServiceDefinition.Port') ?? 0,
      Weights: { Passing: weights.Passing ?? 1, Warning: weights.Warning ?? 1 },
      EnableTagOverride: f.EnableTagOverride === true,
    },
    checks,
  };
}

function decodeCheck(raw: unknown): CheckType {
  const f = strictFields(raw, CHECK_FIELDS, CHECK_ALIASES, 'structs.CheckType');
  const str = (name: string): string | undefined => stringField(f[name], `CheckType.${name}`);
  const duration = (name: string): number => (f[name] === undefined || f[name] === null ? 0 : durationField(f[name], `CheckType.${name}`));
  let header: Record<string, string[]> | undefined;
  if (f.Header !== undefined && f.Header !== null) {
    if (
      typeof f.Header !== 'object' ||
      Array.isArray(f.Header) ||
      Object.values(f.Header).some((v) => !Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    ) {
      throw new Error(`json: cannot unmarshal ${jsonType(f.Header)} into Go struct field CheckType.Header of type map[string][]string`);
    }
    header = f.Header as Record<string, string[]>;
  }
  return {
    CheckID: str('CheckID'),
    Name: str('Name'),
    Status: str('Status'),
    Notes: str('Notes'),
    HTTP: str('HTTP'),
    Method: str('Method'),
    Header: header,
    Body: str('Body'),
    TCP: str('TCP'),
    UDP: str('UDP'),
    GRPC: str('GRPC'),
    H2PING: str('H2PING'),
    OSService: str('OSService'),
    ScriptArgs: stringList(f.ScriptArgs, 'CheckType.ScriptArgs'),
    AliasNode: str('AliasNode'),
    AliasService: str('AliasService'),
    IntervalMs: duration('Interval'),
    TimeoutMs: duration('Timeout'),
    TtlMs: duration('TTL'),
    OutputMaxSize: intField(f.OutputMaxSize, 'CheckType.OutputMaxSize') ?? 0,
  };
}

function emptyCheck(c: CheckType): boolean {
  return (
    !c.CheckID &&
    !c.Name &&
    !c.HTTP &&
    !c.TCP &&
    !c.UDP &&
    !c.GRPC &&
    !c.H2PING &&
    !c.OSService &&
    !c.ScriptArgs?.length &&
    !c.AliasNode &&
    !c.AliasService &&
    c.IntervalMs === 0 &&
    c.TtlMs === 0 &&
    !c.Status &&
    !c.Notes
  );
}

/** `CheckType.Validate`. */
function validateCheck(c: CheckType): string | null {
  const intervalCheck = (c.ScriptArgs?.length ?? 0) > 0 || !!c.HTTP || !!c.TCP || !!c.UDP || !!c.GRPC || !!c.H2PING || !!c.OSService;
  if (c.IntervalMs > 0 && c.TtlMs > 0) return 'Interval and TTL cannot both be specified';
  if (intervalCheck && c.IntervalMs <= 0) return 'Interval must be > 0 for Script, HTTP, H2PING, TCP, UDP or GRPC checks';
  if (!intervalCheck && !c.AliasNode && !c.AliasService && c.TtlMs <= 0) return 'TTL must be > 0 for TTL checks';
  if (c.OutputMaxSize < 0) return 'MaxOutputMaxSize must be positive';
  return null;
}

/** `ValidateServiceMetadata` (agent/structs/structs.go). */
function validateMeta(meta: Record<string, string>): string | null {
  const pairs = Object.entries(meta);
  if (pairs.length > 64) return 'Node metadata cannot contain more than 64 key/value pairs';
  for (const [key, value] of pairs) {
    let problem: string | null = null;
    if (key === '') problem = 'Key cannot be blank';
    else if (!META_KEY.test(key)) problem = 'Key contains invalid characters';
    else if (key.length > 128) problem = 'Key is too long (limit: 128 characters)';
    else if (key.startsWith('consul-')) problem = "Key prefix 'consul-' is reserved for internal use";
    else if (value.length > 512) problem = 'Value is too long (limit: 512 characters)';
    if (problem !== null) return `Couldn't load metadata pair ('${key}', '${value}'): ${problem}`;
  }
  return null;
}

export function agentService(s: Service): Record<string, unknown> {
  return {
    ID: s.ID,
    Service: s.Service,
    Tags: s.Tags,
    Meta: s.Meta,
    Port: s.Port,
    Address: s.Address,
    Weights: s.Weights,
    EnableTagOverride: s.EnableTagOverride,
    Datacenter: 'dc1',
  };
}

function agentCheck(c: Check): Record<string, unknown> {
  return {
    Node: NODE_NAME,
    CheckID: c.CheckID,
    Name: c.Name,
    Status: c.Status,
    Notes: c.Notes,
    Output: c.Output,
    ServiceID: c.ServiceID,
    ServiceName: c.ServiceName,
    ServiceTags: c.ServiceTags,
    Type: c.Type,
    Interval: c.Interval,
    Timeout: c.Timeout,
    Definition: c.Definition,
    CreateIndex: c.CreateIndex,
    ModifyIndex: c.ModifyIndex,
  };
}

export { agentCheck };
