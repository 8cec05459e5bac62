/**
 * `svc deploy <app_or_module>[:<workload>] [--prune] [--dry-run] [--json]`: reads the
 * app's manifest (Python imports it), bundles its project folder, uploads
 * the bundle unless the server has it (`HEAD /api/v1/bundles/:sha256`, then
 * `POST /api/v1/bundles`), and deploys (`POST /api/v1/apps/:app/deployments`).
 * Progress goes to stderr; stdout gets each deployed workload's name and
 * stable URL, or with --json exactly
 * `{"app", "workloads": [{"name", "kind", "url"}]}`. With --dry-run it asks
 * for the deploy's plan instead and deploys nothing (deploy-plan.ts).
 */
import type { AppView } from '../../core/http/api/app-view.js';
import { SvcError } from '../../core/model/errors.js';
import type { AppSpec, Workload } from '../../core/model/workload/types.js';
import { API_PREFIX, type ApiClient } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import { parseDeployTarget } from '../names.js';
import { startSpinner } from '../spinner.js';
import type { Output } from '../output.js';
import { formatTable } from '../table.js';
import { appPath } from './app.js';
import { printPlan } from './deploy-plan.js';
import type { DeployPlan } from '../../core/services/deployments/plan.js';
import type { DomainView } from '../../core/model/domains/types.js';
import { printDomains } from './domain.js';
import { uploadCode } from './upload-code.js';

export interface DeployFlags {
  readonly prune?: boolean;
  readonly json?: boolean;
  /** Print what the deploy would do (the server's plan, Nomad's on a cluster); deploy nothing. */
  readonly dryRun?: boolean;
}

/** What `--json` prints, exactly. */
export interface DeployResult {
  readonly app: string;
  readonly workloads: { readonly name: string; readonly kind: string; readonly url: string | null }[];
  /** The custom domains the deployed workloads set, with their status and the DNS record to publish; absent when none does. */
  readonly domains?: readonly DomainView[];
}

export default async function deploy(
  context: CommandContext,
  appOrModule: string,
  flags: DeployFlags = {},
): Promise<DeployResult | DeployPlan> {
  const { out } = context;
  const { target, workload: wanted } = parseDeployTarget(appOrModule);
  if (flags.prune && wanted !== null) throw pruneWithOneWorkload(target, wanted);
  // Before Python runs: no token, no point in reading the app.
  const { client } = await connect(context);

  const uploaded = await uploadCode(context, client, target, (spec) =>
    wanted === null ? null : findWorkload(spec.workloads, wanted, spec.name),
  );
  const { manifest, bundle, checked: workload } = uploaded;
  const { spec } = manifest;
  const body = {
    manifest: manifest.raw,
    bundle,
    ...(workload === null ? {} : { workload: workload.name }),
    ...(flags.prune ? { prune: true } : {}),
    // svc.Secret.from_dict values: beside the manifest, never in it; the server keeps them sealed.
    ...(manifest.inlineSecrets === undefined ? {} : { inlineSecrets: manifest.inlineSecrets }),
  };
  if (flags.dryRun) {
    const plan = await client.post<DeployPlan>(`${appPath(spec.name)}/deployments/plan`, body, { long: true });
    printPlan(out, plan, flags.json === true);
    return plan;
  }
  const what = workload === null ? spec.name : `${spec.name}/${workload.name}`;
  const view = await postDeploy(context, client, spec.name, body, what);

  const names = new Set(workload === null ? spec.workloads.map((w) => w.name) : [workload.name]);
  const deployed = view.deployments.filter((d) => names.has(d.workload));
  // What the deploy read of each ASGI app's OpenAPI description: svc app export builds its typed methods from it.
  for (const d of deployed) if (d.api) out.done(`${d.workload}: ${d.api}`);
  const domains = await claimedDomains(client, spec, view.name, names);
  const result: DeployResult = {
    app: view.name,
    workloads: deployed.map((d) => ({ name: d.workload, kind: d.kind, url: d.urls.path })),
    ...(domains.length > 0 ? { domains } : {}),
  };
  if (flags.json) out.result(JSON.stringify(result, null, 2));
  else printDeployed(out, deployed, domains, target, spec);
  return result;
}

/** --prune deploys the whole app, so it cannot go with one workload. */
function pruneWithOneWorkload(target: string, wanted: string): SvcError {
  return new SvcError(
    'usage_invalid',
    `--prune removes the deployments the app no longer has, so it deploys the whole app; it cannot go with one workload (:${wanted}).`,
    {
      hint: `Run \`svc deploy ${target} --prune\` for the whole app.`,
    },
  );
}

/** Deploys: the server answers once the app serves, so a spinner says it is still working meanwhile. */
async function postDeploy(context: CommandContext, client: ApiClient, app: string, body: object, what: string): Promise<AppView> {
  const { out } = context;
  const started = Date.now();
  const spinner = startSpinner(
    out,
    context.stderr,
    `deploying ${what} (the server answers once it serves; a first image build takes a while)…`,
  );
  let view: AppView;
  try {
    view = await client.post<AppView>(`${appPath(app)}/deployments`, body, { long: true });
  } finally {
    spinner.stop();
  }
  out.done(`deployed ${what} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  for (const warning of view.warnings) out.warn(warning);
  return view;
}

/** The app's custom domains the deployed workloads set, with their status and the record to publish (a deploy claims them). */
async function claimedDomains(client: ApiClient, spec: AppSpec, app: string, names: ReadonlySet<string>): Promise<DomainView[]> {
  if (!spec.workloads.some((w) => w.http?.domain)) return [];
  return (await client.get<{ domains: DomainView[] }>(`${API_PREFIX}/domains`)).domains.filter(
    (d) => d.app === app && names.has(d.workload),
  );
}

/** Each deployed workload with its URL (or why it has none), then the custom domains. */
function printDeployed(out: Output, deployed: AppView['deployments'], domains: readonly DomainView[], target: string, spec: AppSpec): void {
  const { dim } = out.color;
  const rows = deployed.map((d) => [
    d.workload,
    d.urls.path ??
      dim(
        noUrlText(
          d.kind,
          spec.workloads.find((w) => w.name === d.workload),
          target,
        ),
      ),
  ]);
  for (const line of formatTable(['', ''], rows).slice(1)) out.result(line);
  if (domains.length > 0) printDomains(out, domains);
}

/** Why a deployed workload has no URL, and how it is called. */
function noUrlText(kind: string, workload: Workload | undefined, target: string): string {
  if (kind !== 'function' || workload === undefined) return '(no URL)';
  const methods = workload.class?.methods ?? [];
  if (workload.class !== undefined)
    return methods.length === 0
      ? '(a class: its methods are served by its endpoints)'
      : `(a class: no URL; call its methods from Python, ${workload.handler}().${methods[0]!.name}.remote(...))`;
  return `(a function: no URL; call it with svc run ${target}:${workload.name})`;
}

/** The workload `wanted` names: its name, or its Python function's (`say_hello` for `say-hello`). */
function findWorkload(workloads: readonly Workload[], wanted: string, app: string): Workload {
  const found = workloads.find((w) => w.name === wanted) ?? workloads.find((w) => w.handler === wanted);
  if (found === undefined) {
    throw new SvcError(
      'usage_invalid',
      `the app ${app} has no workload ${JSON.stringify(wanted)}; it has ${workloads.map((w) => w.name).join(', ')}.`,
      {
        hint: 'Name a workload as the app defines it, or leave out :<workload> to deploy the whole app.',
      },
    );
  }
  return found;
}
